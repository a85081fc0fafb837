"""XMPP's live replies: a message sent once, then corrected in place (XEP-0308) as the reply grows."""

from __future__ import annotations

from typing import Literal

from channels.xmpp.client import XmppClient

DELETED = "(withdrawn)"
"""What a correction leaves of a message the live reply no longer needs (XEP-0308 cannot take one back)."""


class XmppCorrections:
    """EditsMessages for one chat: each edit is a correction naming the original message's id (XEP-0308 §4)."""

    def __init__(self, client: XmppClient, to: str, kind: Literal["chat", "groupchat"]) -> None:
        self._client = client
        self._to = to
        self._kind = kind

    async def post_text(self, text: str, markup: bool, reply_to: str | None) -> str:
        return await self._client.send_checked(self._to, text, self._kind)

    async def edit_text(self, message_id: str, text: str, markup: bool) -> None:
        await self._client.send_checked(self._to, text, self._kind, replaces=message_id)

    async def delete(self, message_id: str) -> None:
        await self._client.send_checked(self._to, DELETED, self._kind, replaces=message_id)

"""Matrix's live replies: a message posted once, then edited in place with `m.replace` as the reply grows."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from bot.bus import ChatRef
from channels.matrix.send import MatrixSender, relation, text_content
from channels.streaming import PlatformCall


class MatrixEdits:
    """EditsMessages for one Matrix room (or thread); `on_posted` hears of each event it posts."""

    def __init__(
        self,
        sender: MatrixSender,
        call: PlatformCall,
        client: Any,
        chat: ChatRef,
        on_posted: Callable[[str], None] = lambda event_id: None,
    ) -> None:
        self._sender = sender
        self._call = call
        self._client = client
        self._chat = chat
        self._on_posted = on_posted

    async def post_text(self, text: str, markup: bool, reply_to: str | None) -> str:
        content = text_content(text, markup)
        if related := relation(self._chat, reply_to):
            content["m.relates_to"] = related
        event_id = await self._sender.post(self._chat, content)
        self._on_posted(event_id)
        return event_id

    async def edit_text(self, message_id: str, text: str, markup: bool) -> None:
        await self._sender.edit(self._chat, message_id, text_content(text, markup))

    async def delete(self, message_id: str) -> None:
        await self._call(partial(self._client.room_redact, self._chat.chat_id, message_id))

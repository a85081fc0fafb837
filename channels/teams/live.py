"""Teams' live replies: the first text posted, then the same activity replaced with PUT as the reply grows."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from bot.bus import ChatRef
from channels.teams.parse import conversation_of
from channels.teams.send import text_activity

Post = Callable[[ChatRef, dict[str, Any]], Awaitable[str]]


class TeamsEdits:
    """EditsMessages for one Teams conversation, through the Connector's activity updates."""

    def __init__(self, connector: Any, service_url: str, chat: ChatRef, post: Post) -> None:
        self._connector = connector
        self._service_url = service_url
        self._chat = chat
        self._post = post

    async def post_text(self, text: str, markup: bool, reply_to: str | None) -> str:
        activity = text_activity(text)
        if reply_to:
            activity["replyToId"] = reply_to
        return await self._post(self._chat, activity)

    async def edit_text(self, message_id: str, text: str, markup: bool) -> None:
        conversation = conversation_of(self._chat)
        await self._connector.update(self._service_url, conversation, message_id, text_activity(text))

    async def delete(self, message_id: str) -> None:
        await self._connector.delete(self._service_url, conversation_of(self._chat), message_id)

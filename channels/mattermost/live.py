"""Mattermost's live replies: a post edited in place (PUT /posts/{id}/patch) as the reply grows."""

from __future__ import annotations

from collections.abc import Callable

from bot.bus import ChatRef
from channels.mattermost.calls import MattermostApi

Posted = Callable[[str], None]
"""Told the id of each post a live reply makes."""


class MattermostEdits:
    """EditsMessages for one Mattermost channel (or thread)."""

    def __init__(self, api: MattermostApi, chat: ChatRef, posted: Posted) -> None:
        self._api = api
        self._chat = chat
        self._posted = posted

    async def post_text(self, text: str, markup: bool, reply_to: str | None) -> str:
        body = {"channel_id": self._chat.chat_id, "message": text}
        if self._chat.thread_id:
            body["root_id"] = self._chat.thread_id
        post_id = str((await self._api.create_post(body))["id"])
        self._posted(post_id)
        return post_id

    async def edit_text(self, message_id: str, text: str, markup: bool) -> None:
        await self._api.patch_post(message_id, {"message": text})

    async def delete(self, message_id: str) -> None:
        await self._api.delete_post(message_id)

"""Discord's live replies: one message edited as the reply grows, code fences balanced in every edit."""

from __future__ import annotations

from typing import Any

from channels.sent_replies import SentReplies
from channels.streaming import PlatformCall


class DiscordEdits:
    """EditsMessages for one Discord channel or thread; an edit with unchanged content is skipped.

    Every message posted is recorded in `replies` under `answering` (the user's message), so a re-run answer
    can later replace the reply in place.
    """

    def __init__(
        self, target: Any, call: PlatformCall, replies: SentReplies[str] | None = None, answering: str | None = None
    ) -> None:
        self._target = target
        self._call = call
        self._replies = replies
        self._answering = answering
        self._content: dict[str, str] = {}

    async def post_text(self, text: str, markup: bool, reply_to: str | None) -> str:
        reference = None
        if reply_to:
            reference = self._target.get_partial_message(int(reply_to)).to_reference(fail_if_not_exists=False)
        sent = await self._call(lambda: self._target.send(text, reference=reference))
        self._content[str(sent.id)] = text
        if self._replies is not None and self._answering:
            self._replies.add(self._answering, str(sent.id))
        return str(sent.id)

    async def edit_text(self, message_id: str, text: str, markup: bool) -> None:
        if self._content.get(message_id) == text:
            return
        await self._call(lambda: self._target.get_partial_message(int(message_id)).edit(content=text))
        self._content[message_id] = text

    async def delete(self, message_id: str) -> None:
        await self._call(lambda: self._target.get_partial_message(int(message_id)).delete())
        self._content.pop(message_id, None)
        if self._replies is not None and self._answering:
            self._replies.discard(self._answering, message_id)

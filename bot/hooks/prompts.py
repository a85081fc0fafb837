"""Open prompts: button presses and typed answers taken ahead of the queue, so a waiting turn hears them at once."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from bot.bus import InboundMessage, OutboundMessage

logger = logging.getLogger(__name__)

CLOSED = "This question is closed."
PromptHandler = Callable[[InboundMessage], Awaitable[bool]]
"""Takes a user's message if it answers a prompt the handler owns (True: handled, never queued), else False."""


class Prompts:
    """The handlers of prompts that wait for a person: approvals, `ask_user` questions, the /model picker."""

    def __init__(self) -> None:
        self._handlers: list[PromptHandler] = []
        self._notify: Callable[[OutboundMessage], Awaitable[object]] | None = None

    def notify_with(self, publish: Callable[[OutboundMessage], Awaitable[object]]) -> None:
        """Tell a presser privately, through `publish`, when their press is on a prompt no longer open."""
        self._notify = publish

    def on(self, handler: PromptHandler) -> None:
        """Offer every user message (presses first of all) to `handler`, after those added before it."""
        self._handlers.append(handler)

    async def take(self, message: InboundMessage) -> bool:
        """Whether a handler took the message; a press nobody owns is taken too, so it never reaches the model."""
        if message.kind != "user":
            return False
        for handler in self._handlers:
            if await handler(message):
                return True
        if message.press is not None:
            logger.info("[%s] press on closed prompt %s ignored", message.chat.session_key, message.press.prompt_id)
            if self._notify is not None:
                await self._notify(
                    OutboundMessage(message.chat, CLOSED, kind="notice", private_to=message.sender_id or None)
                )
            return True
        return False

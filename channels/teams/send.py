"""Delivering an OutboundMessage on Teams: markdown text split at the limit, choices as an Adaptive Card's
Action.Submit buttons, files through the consent card in personal chats."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from functools import partial
from typing import Any

from bot.bus import ChatRef, OutboundMessage
from bot.errors import ChannelUnavailable
from bot.retry import RetryPolicy
from channels.delivery import send_in_chunks
from channels.numbered import numbered_text
from channels.teams.calls import Connector
from channels.teams.parse import choice_data, conversation_of

MAX_MESSAGE_LENGTH = 4000  # Teams takes about 28 KB an activity; relaybot pages long replies at 4,000 characters
MAX_ACTIONS = 6  # an Adaptive Card in Teams shows at most six top-level actions
ADAPTIVE_CARD = "application/vnd.microsoft.card.adaptive"
Where = Callable[[ChatRef], str]
"""The serviceUrl of a chat (where its activities came from)."""
Offer = Callable[[OutboundMessage], Awaitable[None]]
"""Offers the message's files (the consent flow), or says in the chat that they cannot go there."""


def text_activity(text: str) -> dict[str, Any]:
    """A markdown message activity."""
    return {"type": "message", "text": text, "textFormat": "markdown"}


def card_activity(message: OutboundMessage, body: str) -> dict[str, Any]:
    """A message whose Adaptive Card shows `body` and one Action.Submit per choice."""
    actions = [
        {"type": "Action.Submit", "title": c.label, "data": choice_data(message.prompt_id, c.id, c.label)}
        for c in message.choices
    ]
    card = {
        "type": "AdaptiveCard",
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "version": "1.4",
        "body": [{"type": "TextBlock", "text": body, "wrap": True}],
        "actions": actions,
    }
    return {"type": "message", "attachments": [{"contentType": ADAPTIVE_CARD, "content": card}]}


class TeamsSender:
    """Sends one bot's outbound messages to the conversations it has heard from."""

    def __init__(self, connector: Connector, where: Where, retry: RetryPolicy, offer: Offer) -> None:
        self._connector = connector
        self._where = where
        self._retry = retry
        self._offer = offer

    async def send(self, message: OutboundMessage) -> None:
        """Files first (offered), then the text, then the card with the choices."""
        if message.files:
            await self._offer(message)
        text = message.text
        card = message.choices and len(message.choices) <= MAX_ACTIONS
        if message.choices and not card:
            text = numbered_text(message)
        body = ""
        if card and len(text) <= MAX_MESSAGE_LENGTH:
            body, text = text or "Choose one:", ""
        if text.strip():
            await send_in_chunks(
                replace(message, text=text), MAX_MESSAGE_LENGTH, str, partial(self._chunk, message), self._retry
            )
        if card:
            await self.post(message.chat, card_activity(message, body or "Choose one:"), message)

    async def post(self, chat: ChatRef, activity: dict[str, Any], message: OutboundMessage | None = None) -> str:
        """Post one activity to the chat, retrying transient failures; its id."""
        what = f"[{chat.session_key}] send {message.id if message else 'activity'}"
        call = partial(self._connector.send, self._where(chat), conversation_of(chat), activity)
        return await self._retry.run(call, what, (ChannelUnavailable,))

    async def _chunk(self, message: OutboundMessage, text: str, as_markup: bool, first: bool) -> None:
        activity = text_activity(text)
        if first and message.kind == "reply" and message.reply_to_platform_id:
            activity["replyToId"] = message.reply_to_platform_id
        await self.post(message.chat, activity, message)

"""Which of the bot's messages shows each prompt's buttons, so a prompt closed without a press loses them."""

from __future__ import annotations

from dataclasses import replace

from bot.bus import OutboundMessage
from bot.storage.recent import RecentMap

REMEMBERED_PROMPTS = 1000


def closes_prompt(message: OutboundMessage) -> bool:
    """Whether the message replaces its prompt's message (prompt_id set, no choices, no edit_of)."""
    return bool(message.prompt_id) and not message.choices and not message.edit_of


class PromptMessages:
    """A bounded in-memory map from (chat, prompt id) to the platform id of the message under which its buttons are."""

    def __init__(self, limit: int = REMEMBERED_PROMPTS) -> None:
        self._shown: RecentMap[tuple[str, str], str] = RecentMap(limit)

    def record(self, message: OutboundMessage, platform_id: str) -> None:
        """Note that `platform_id` carries the buttons of `message` (no-op for a message without them)."""
        if not message.choices or not message.prompt_id:
            return
        key = (message.chat.session_key, message.prompt_id)
        self._shown[key] = platform_id

    def resolve(self, message: OutboundMessage) -> OutboundMessage:
        """A closing message as an edit of its prompt's message when that is known (and forgotten now), else as is."""
        if not closes_prompt(message):
            return message
        shown = self._shown.pop((message.chat.session_key, message.prompt_id or ""), None)
        return replace(message, edit_of=shown) if shown else message

"""Choices as numbered lines, for channels without buttons (the terminal, the web chat): a typed number presses one."""

from __future__ import annotations

from bot.bus import ChatRef, Choice, OutboundMessage, Press
from bot.storage.recent import RecentMap

REMEMBERED_PROMPTS = 1000  # chats whose unanswered prompt a number still presses, the latest shown kept


def numbered_text(message: OutboundMessage) -> str:
    """The message's text with one numbered line per choice under it."""
    if not message.choices:
        return message.text
    lines = [f"{number}. {choice.label}" for number, choice in enumerate(message.choices, 1)]
    return "\n".join([message.text, *lines])


class NumberedChoices:
    """The latest prompt with choices in each chat (of the `limit` shown last), so typing its number presses it."""

    def __init__(self, limit: int = REMEMBERED_PROMPTS) -> None:
        self._latest: RecentMap[str, tuple[str, tuple[Choice, ...]]] = RecentMap(limit)

    def shown(self, message: OutboundMessage) -> str:
        """Remember the message's choices (if any) and return its text as numbered lines."""
        if message.choices and message.prompt_id:
            self._latest[message.chat.session_key] = (message.prompt_id, message.choices)
        return numbered_text(message)

    def press(self, chat: ChatRef, text: str) -> tuple[Press, str] | None:
        """The press a typed number makes on the chat's latest prompt, and the choice's label; None for other text."""
        latest = self._latest.get(chat.session_key)
        number = text.strip().rstrip(".")
        if latest is None or not number.isdigit() or not 1 <= int(number) <= len(latest[1]):
            return None
        self._latest.pop(chat.session_key)
        prompt_id, choices = latest
        choice = choices[int(number) - 1]
        return Press(prompt_id, choice.id), choice.label

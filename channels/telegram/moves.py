"""Chats Telegram moved to a new id (a group became a supergroup): what is meant for the old id goes to the new."""

from __future__ import annotations

import logging
from dataclasses import replace

from bot.bus import ChatRef

logger = logging.getLogger(__name__)


class ChatMoves:
    """Old chat id -> new chat id, learnt from a refused send or from the group's own migration notice."""

    def __init__(self) -> None:
        self._moved: dict[str, str] = {}

    def record(self, old_chat_id: str, new_chat_id: str) -> None:
        """Send to `new_chat_id` from now on whatever is meant for `old_chat_id`."""
        if self._moved.get(old_chat_id) != new_chat_id:
            logger.warning("telegram: chat %s moved to %s; sending there from now on", old_chat_id, new_chat_id)
        self._moved[old_chat_id] = new_chat_id

    def follow(self, chat: ChatRef) -> ChatRef:
        """The chat as it is now: the same chat under its new id when Telegram moved it."""
        moved = self._moved.get(chat.chat_id)
        return chat if moved is None else replace(chat, chat_id=moved)

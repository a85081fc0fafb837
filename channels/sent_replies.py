"""Which of the bot's messages answered which user message, so a re-run answer replaces its reply in place."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

from bot.storage.recent import RecentMap

REMEMBERED_REPLIES = 1000
"""User messages whose replies are remembered; an older reply is sent anew instead of replaced."""
REMEMBERED_REPLY_BYTES = 64 * 1024
"""And at most this much of them: about 170 Telegram messages with a one-message reply each."""

K = TypeVar("K", bound=Hashable)


class SentReplies(Generic[K]):
    """A bounded map from a user message (each platform's key) to the ids of the bot's reply, in order."""

    def __init__(self, limit: int = REMEMBERED_REPLIES) -> None:
        self._replies: RecentMap[K, list[str]] = RecentMap(limit, max_bytes=REMEMBERED_REPLY_BYTES)

    def add(self, user_message: K, reply_id: str) -> None:
        """Note that `reply_id` is (one more part of) the bot's answer to `user_message`."""
        ids = self._replies.get(user_message) or []
        if reply_id not in ids:
            ids.append(reply_id)
        self._replies[user_message] = ids

    def of(self, user_message: K) -> list[str]:
        """The bot's reply ids for that user message, in order; empty when unknown or forgotten."""
        return list(self._replies.get(user_message) or ())

    def replace(self, user_message: K, reply_ids: list[str]) -> None:
        """The answer to that user message is now these messages."""
        self._replies[user_message] = list(dict.fromkeys(reply_ids))

    def discard(self, user_message: K, reply_id: str) -> None:
        """Forget one reply message (it was deleted)."""
        ids = self._replies.get(user_message)
        if ids and reply_id in ids:
            ids.remove(reply_id)
            self._replies.reweigh(user_message)

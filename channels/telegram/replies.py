"""Which of the bot's messages answered which user message, so a re-run answer can replace its reply in place."""

from __future__ import annotations

from collections import OrderedDict

REMEMBERED_REPLIES = 1000


class SentReplies:
    """A bounded in-memory map from (chat, user message id) to the bot's reply message ids, oldest forgotten first."""

    def __init__(self, limit: int = REMEMBERED_REPLIES) -> None:
        self._limit = limit
        self._replies: OrderedDict[tuple[str, str], list[str]] = OrderedDict()

    def record(self, chat_id: str, user_message_id: str | None, reply_id: str) -> None:
        """Note that `reply_id` is (part of) the bot's answer to `user_message_id`."""
        if not user_message_id:
            return
        key = (chat_id, user_message_id)
        ids = self._replies.setdefault(key, [])
        if reply_id not in ids:
            ids.append(reply_id)
        self._replies.move_to_end(key)
        while len(self._replies) > self._limit:
            self._replies.popitem(last=False)

    def of(self, chat_id: str, user_message_id: str) -> list[str]:
        """The bot's reply message ids for that user message, in order; empty when unknown or forgotten."""
        return list(self._replies.get((chat_id, user_message_id), ()))

    def replace(self, chat_id: str, user_message_id: str, reply_ids: list[str]) -> None:
        """The answer to that user message is now these messages."""
        self._replies.pop((chat_id, user_message_id), None)
        for reply_id in reply_ids:
            self.record(chat_id, user_message_id, reply_id)

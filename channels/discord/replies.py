"""What the Discord adapter remembers between a message in and the answer out: open interactions, sent replies."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

TOKEN_LIFETIME = 14 * 60.0  # an interaction's token answers for 15 minutes; leave a margin
KEPT = 512


@dataclass
class OpenInteraction:
    """An acknowledged interaction whose token still answers; `answered` once its original response was filled."""

    interaction: Any
    session_key: str
    user_id: str
    message_id: str | None
    is_command: bool
    at: float
    answered: bool = False


class OpenInteractions:
    """Recent interactions, found by id, by the user in a chat, or by the message their button was on."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, limit: int = KEPT) -> None:
        self._clock = clock
        self._limit = limit
        self._open: OrderedDict[str, OpenInteraction] = OrderedDict()

    def add(self, interaction: Any, session_key: str, user_id: str, message_id: str | None, is_command: bool) -> None:
        """Keep `interaction` (acknowledged already) for answers; the oldest go past `limit`."""
        self._open[str(interaction.id)] = OpenInteraction(
            interaction, session_key, user_id, message_id, is_command, self._clock()
        )
        while len(self._open) > self._limit:
            self._open.popitem(last=False)

    def get(self, interaction_id: str) -> OpenInteraction | None:
        """The interaction with this id, while its token answers."""
        found = self._open.get(interaction_id)
        return found if found is not None and self._fresh(found) else None

    def of_user(self, session_key: str, user_id: str) -> OpenInteraction | None:
        """The latest interaction by `user_id` in this chat (where an ephemeral notice for them can go)."""
        self._drop_stale()
        for found in reversed(self._open.values()):
            if (found.session_key, found.user_id) == (session_key, user_id):
                return found
        return None

    def on_message(self, message_id: str) -> OpenInteraction | None:
        """The latest press of a button on message `message_id` (through which that message can be edited)."""
        for found in reversed(self._open.values()):
            if found.message_id == message_id and not found.is_command and self._fresh(found):
                return found
        return None

    def _drop_stale(self) -> None:
        while self._open and not self._fresh(next(iter(self._open.values()))):
            self._open.popitem(last=False)

    def _fresh(self, found: OpenInteraction) -> bool:
        return self._clock() - found.at < TOKEN_LIFETIME


class SentReplies:
    """Which bot messages answered which user message (bounded), so a re-run answer can replace them in place."""

    def __init__(self, limit: int = KEPT) -> None:
        self._limit = limit
        self._replies: OrderedDict[str, list[str]] = OrderedDict()

    def add(self, user_message_id: str, reply_id: str) -> None:
        """Record one more message of the bot's reply to `user_message_id`."""
        self._replies.setdefault(user_message_id, []).append(reply_id)
        self._replies.move_to_end(user_message_id)
        while len(self._replies) > self._limit:
            self._replies.popitem(last=False)

    def discard(self, user_message_id: str, reply_id: str) -> None:
        """Forget a reply message that was deleted."""
        ids = self._replies.get(user_message_id)
        if ids and reply_id in ids:
            ids.remove(reply_id)

    def of(self, user_message_id: str) -> list[str]:
        """The bot's messages answering `user_message_id`, in order; [] when unknown."""
        return list(self._replies.get(user_message_id, ()))

    def replace(self, user_message_id: str, reply_ids: list[str]) -> None:
        """The reply to `user_message_id` is now these messages."""
        self._replies[user_message_id] = list(reply_ids)
        self._replies.move_to_end(user_message_id)

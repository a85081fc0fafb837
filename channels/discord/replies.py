"""The Discord interactions still open: acknowledged, their tokens answering for 15 minutes (sent replies are in
`channels.sent_replies`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.storage.recent import RecentMap

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
        self._open: RecentMap[str, OpenInteraction] = RecentMap(limit)

    def add(self, interaction: Any, session_key: str, user_id: str, message_id: str | None, is_command: bool) -> None:
        """Keep `interaction` (acknowledged already) for answers; the oldest go past `limit`."""
        self._open[str(interaction.id)] = OpenInteraction(
            interaction, session_key, user_id, message_id, is_command, self._clock()
        )

    def get(self, interaction_id: str) -> OpenInteraction | None:
        """The interaction with this id, while its token answers."""
        found = self._open.get(interaction_id)
        return found if found is not None and self._fresh(found) else None

    def of_user(self, session_key: str, user_id: str) -> OpenInteraction | None:
        """The latest interaction by `user_id` in this chat (where an ephemeral notice for them can go)."""
        self._drop_stale()
        for found in self._open.newest_first():
            if (found.session_key, found.user_id) == (session_key, user_id):
                return found
        return None

    def on_message(self, message_id: str) -> OpenInteraction | None:
        """The latest press of a button on message `message_id` (through which that message can be edited)."""
        for found in self._open.newest_first():
            if found.message_id == message_id and not found.is_command and self._fresh(found):
                return found
        return None

    def _drop_stale(self) -> None:
        while (oldest := self._open.oldest()) is not None and not self._fresh(self._open[oldest]):
            self._open.pop(oldest)

    def _fresh(self, found: OpenInteraction) -> bool:
        return self._clock() - found.at < TOKEN_LIFETIME

"""Ignore notices in Redis: shared by every gateway, so a sender is logged once across all of them."""

from __future__ import annotations

from bot.cluster.redis import RedisState

IGNORE_NOTICE_TTL = 24 * 3600


class RedisIgnoreNotices:
    """Ignored senders already logged, shared by every gateway; each is logged again after a day at most."""

    def __init__(self, state: RedisState, ttl: int = IGNORE_NOTICE_TTL) -> None:
        self._state = state
        self._ttl = ttl

    def first(self, channel: str, sender: str) -> bool:
        """True for the first gateway to ask about `sender` on `channel` within the ttl."""
        key = self._state.key("access", "ignored", channel, sender)
        return bool(self._state.client.set(key, "1", nx=True, ex=self._ttl))

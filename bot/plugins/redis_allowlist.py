"""The approvals' allow list in Redis: one set shared by the gateway and every worker."""

from __future__ import annotations

from bot.cluster.redis import RedisState


class RedisAllowList:
    """Allowed commands and file changes as members of one set under the bus prefix."""

    def __init__(self, state: RedisState) -> None:
        self._state = state
        self._key = state.key("approvals_allowed")

    def allows(self, subject: str) -> bool:
        """Whether an owner allowed exactly this command or change for good."""
        return bool(self._state.client.sismember(self._key, subject))

    def add(self, subject: str) -> None:
        """Allow `subject` from now on."""
        self._state.client.sadd(self._key, subject)

    def remove(self, subject: str) -> bool:
        """Ask about `subject` again; False when it was not allowed."""
        return bool(self._state.client.srem(self._key, subject))

    def entries(self) -> list[str]:
        """Everything allowed, sorted."""
        members = self._state.client.smembers(self._key)
        return sorted(str(member) for member in members)

"""Per-chat settings in Redis: one hash shared by the gateway and every worker."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from bot.chats.settings import ChatSettings, settings_from_json, settings_to_json
from bot.cluster.redis import RedisState


class RedisChatSettings:
    """Chat settings as JSON values in one hash under the bus prefix, keyed by session key."""

    def __init__(self, state: RedisState) -> None:
        self._state = state
        self._key = state.key("chat_settings")

    def get(self, session_key: str) -> ChatSettings:
        """The chat's settings; all None for a chat that never changed any."""
        return settings_from_json(self._state.client.hget(self._key, session_key))

    def update(self, session_key: str, **changes: Any) -> ChatSettings:
        """Set the named fields and return the chat's new settings (last writer wins per chat)."""
        settings = replace(self.get(session_key), **changes)
        self._state.client.hset(self._key, session_key, settings_to_json(settings))
        return settings

"""Each group's `/activation` choice (mention or always), read through a short cache by the access policy."""

from __future__ import annotations

import time
from collections.abc import Callable

from bot.bus import ChatRef
from bot.chats.settings import Activation, ChatSettingsStore
from bot.config.channels.base import GroupPolicy
from bot.storage.recent import RecentMap

CACHE_SECONDS = 10.0
MAX_CACHED = 10_000  # groups whose choice is cached; the rest are read from the store again


def group_key(chat: ChatRef) -> str:
    """The settings key of a chat's group: a topic or thread follows its group's activation."""
    return chat.whole_chat.session_key


def policy_with(configured: GroupPolicy, activation: Activation | None) -> GroupPolicy:
    """The group policy after the group's `/activation` choice; a group the config turns off stays off."""
    if configured == "off" or activation is None:
        return configured
    return "open" if activation == "always" else "mention"


class Activations:
    """Each group's `/activation` choice, persisted in the chat settings and read through a short cache."""

    def __init__(
        self,
        store: ChatSettingsStore,
        clock: Callable[[], float] = time.monotonic,
        cache_seconds: float = CACHE_SECONDS,
        max_cached: int = MAX_CACHED,
    ) -> None:
        self._store = store
        self._clock = clock
        self._cache_seconds = cache_seconds
        self._cache: RecentMap[str, tuple[float, Activation | None]] = RecentMap(max_cached)

    def of(self, chat: ChatRef) -> Activation | None:
        """The group's choice, None when it left it to the config; another process's change shows within seconds."""
        key = group_key(chat)
        cached = self._cache.get(key)
        now = self._clock()
        if cached is not None and now - cached[0] < self._cache_seconds:
            return cached[1]
        activation = self._store.get(key).activation
        self._cache[key] = (now, activation)
        return activation

    def choose(self, chat: ChatRef, mode: Activation) -> None:
        """Persist the group's choice; this process sees it at once."""
        key = group_key(chat)
        self._store.update(key, activation=mode)
        self._cache[key] = (self._clock(), mode)

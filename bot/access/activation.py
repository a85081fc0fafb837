"""`/activation mention|always`: a group's own choice between answering mentions and answering everything."""

from __future__ import annotations

import time
from collections.abc import Callable

from bot.bus import ChatRef, Trust
from bot.chats.settings import Activation, ChatSettingsStore
from bot.commands.catalogue import ACTIVATION
from bot.commands.parse import invocation
from bot.config.schema_channels import GroupPolicy
from bot.storage.recent import RecentMap

CACHE_SECONDS = 10.0
MAX_CACHED = 10_000  # groups whose choice is cached; the rest are read from the store again
USAGE = "Use /activation mention (answer when mentioned) or /activation always (answer every message)."
ONLY_ADMINS = "Only an admin or owner can change when I answer in this group."
ONLY_GROUPS = "/activation is for groups; here I answer every message."
_SAID = {"mention": "I answer here only when mentioned or replied to.", "always": "I answer every message here."}


def activation_args(text: str) -> list[str] | None:
    """The words after `/activation` (or `/activation@bot`), or None when the message is not that command."""
    found = invocation(text)
    if found is None or found.built_in is not ACTIVATION:
        return None
    return [word.lower() for word in found.args.split()]


def group_key(chat: ChatRef) -> str:
    """The settings key of a chat's group: a topic or thread follows its group's activation."""
    return ChatRef(chat.channel, chat.chat_id).session_key


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
        self._remember(key, now, activation)
        return activation

    def answer(self, chat: ChatRef, is_direct: bool, role: Trust, args: list[str]) -> str:
        """Carry out `/activation` for a sender of `role` and say what holds now."""
        if is_direct:
            return ONLY_GROUPS
        if not args:
            current = self.of(chat) or "config"
            return f"Activation here: {current}. {USAGE}"
        if len(args) != 1 or args[0] not in _SAID:
            return USAGE
        if not role.at_least(ACTIVATION.role):
            return ONLY_ADMINS
        mode: Activation = "always" if args[0] == "always" else "mention"
        key = group_key(chat)
        self._store.update(key, activation=mode)
        self._remember(key, self._clock(), mode)
        return _SAID[mode]

    def _remember(self, key: str, now: float, activation: Activation | None) -> None:
        """Cache a group's choice, the group read least lately dropped past the bound."""
        self._cache[key] = (now, activation)

"""The activation cache: each group's choice read through a cache that holds a bounded number of groups."""

from __future__ import annotations

from typing import Any

from bot.access.activation import Activations
from bot.bus import ChatRef
from bot.chats.settings import ChatSettings


class CountingSettings:
    """A chat settings store that counts its reads."""

    def __init__(self) -> None:
        self.reads: list[str] = []

    def get(self, session_key: str) -> ChatSettings:
        self.reads.append(session_key)
        return ChatSettings()

    def update(self, session_key: str, **changes: Any) -> ChatSettings:
        return ChatSettings(**changes)


def group(n: int) -> ChatRef:
    return ChatRef("telegram", str(-1000 - n))


def test_the_cache_forgets_the_group_read_least_lately_beyond_its_bound() -> None:
    store = CountingSettings()
    activations = Activations(store, clock=lambda: 0.0, max_cached=3)
    for n in range(5):
        activations.of(group(n))
    activations.of(group(4))  # still cached
    assert len(store.reads) == 5
    activations.of(group(0))  # forgotten: read again
    assert len(store.reads) == 6


def test_a_group_read_again_stays_cached_while_others_come_and_go() -> None:
    store = CountingSettings()
    activations = Activations(store, clock=lambda: 0.0, max_cached=2)
    activations.of(group(0))
    for n in range(1, 6):
        activations.choose(group(0), "always")  # refreshed, so never the oldest
        activations.of(group(n))
    assert activations.of(group(0)) == "always"
    assert store.reads.count(store.reads[0]) == 1

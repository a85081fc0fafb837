"""A map that keeps only its latest items: the one bound for every "remember the last N" in relaybot."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar, overload

K = TypeVar("K")
V = TypeVar("V")
D = TypeVar("D")

ITEM_BYTES = 100  # an item's slots in the map's two tables (its value and its weight), with their spare room


def approx_bytes(value: object) -> int:
    """About the memory `value` holds alone: itself, and the items of a tuple, list or set, counted each time."""
    if value is None or isinstance(value, bool):
        return 0
    size = sys.getsizeof(value)
    if isinstance(value, tuple | list | set | frozenset):
        size += sum(approx_bytes(item) for item in value)
    return size


def item_bytes(key: object, value: object) -> int:
    """About the memory one item of a `RecentMap` holds: its key, its value and its slots."""
    return ITEM_BYTES + approx_bytes(key) + approx_bytes(value)


class RecentMap(Generic[K, V]):
    """At most `capacity` items; setting one makes it the newest, and past the bound the oldest goes.

    Reading with `get` leaves the order alone; `touch` (or `get(key, fresh=True)`) marks an item used, for
    least-recently-used caches. With `weight`, the items' weights also stay within `max_weight` (the newest
    item is kept even when it alone is heavier); `reweigh` is told when a value's weight changed in place.
    `max_bytes` bounds the items' memory instead (each weighed by `item_bytes`), for maps whose items vary in size.
    `on_evict` hears of each item the bounds push out (to close a file, say); `expire` drops stale oldest items.
    A plain dict keeps the order (an OrderedDict's links cost about 70 bytes more an item)."""

    def __init__(
        self,
        capacity: int = sys.maxsize,
        *,
        weight: Callable[[V], int] | None = None,
        max_weight: float = math.inf,
        max_bytes: int | None = None,
        on_evict: Callable[[K, V], None] | None = None,
    ) -> None:
        if capacity < 1:
            raise ValueError(f"a RecentMap holds at least one item, not {capacity}")
        if max_bytes is not None and weight is not None:
            raise ValueError("a RecentMap is bounded by its own weight or by bytes, not both")
        self.capacity = capacity
        self.max_weight = max_weight if max_bytes is None else max_bytes
        self._weigh: Callable[[K, V], int] | None = item_bytes if max_bytes is not None else None
        if weight is not None:
            self._weigh = lambda _, value: weight(value)
        self._on_evict = on_evict
        self._items: dict[K, V] = {}
        self._weights: dict[K, int] = {}
        self.total_weight = 0  # the items' weights, as last weighed

    def __setitem__(self, key: K, value: V) -> None:
        self._items.pop(key, None)  # to the end: the newest
        self._items[key] = value
        self._weighed(key, value)
        self._trim(key)

    def reweigh(self, key: K) -> None:
        """The item's value changed weight in place: weigh it again, and keep the bounds (never dropping `key`)."""
        if key in self._items:
            self._weighed(key, self._items[key])
            self._trim(key)

    def expire(self, stale: Callable[[V], bool]) -> int:
        """Drop items from the oldest on while `stale` holds for them (items kept in order of age); how many."""
        dropped = 0
        while self._items:
            key, value = next(iter(self._items.items()))
            if not stale(value):
                break
            self.pop(key)
            dropped += 1
        return dropped

    def _weighed(self, key: K, value: V) -> None:
        if self._weigh is not None:
            new = self._weigh(key, value)
            self.total_weight += new - self._weights.get(key, 0)
            self._weights[key] = new

    def _trim(self, keep: K) -> None:
        while len(self._items) > 1 and (len(self._items) > self.capacity or self.total_weight > self.max_weight):
            oldest = next(iter(self._items))
            if oldest == keep:
                self._items[keep] = self._items.pop(keep)
                oldest = next(iter(self._items))
            value = self._items.pop(oldest)
            self.total_weight -= self._weights.pop(oldest, 0)
            if self._on_evict is not None:
                self._on_evict(oldest, value)

    def __getitem__(self, key: K) -> V:
        return self._items[key]

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[K]:
        return iter(self._items)

    @overload
    def get(self, key: K, *, fresh: bool = False) -> V | None: ...

    @overload
    def get(self, key: K, default: D, *, fresh: bool = False) -> V | D: ...

    def get(self, key: K, default: object = None, *, fresh: bool = False) -> object:
        """The item's value, or `default`; `fresh=True` also marks it the newest."""
        if key not in self._items:
            return default
        if fresh:
            self._items[key] = value = self._items.pop(key)
            return value
        return self._items[key]

    def touch(self, key: K) -> None:
        """Mark an item the newest, as if just set (a missing key is ignored)."""
        if key in self._items:
            self._items[key] = self._items.pop(key)

    def pop(self, key: K, default: V | None = None) -> V | None:
        """Remove an item and return its value, or `default` when absent (`on_evict` is not called)."""
        self.total_weight -= self._weights.pop(key, 0)
        return self._items.pop(key, default)

    def clear(self) -> None:
        """Remove every item (`on_evict` is not called)."""
        self._items.clear()
        self._weights.clear()
        self.total_weight = 0

    def values(self) -> Iterator[V]:
        """The values, oldest first."""
        return iter(self._items.values())

    def newest_first(self) -> Iterator[V]:
        """The values, newest first."""
        return reversed(self._items.values())

    def items(self) -> Iterator[tuple[K, V]]:
        """The items, oldest first."""
        return iter(self._items.items())

    def oldest(self) -> K | None:
        """The key that goes next, or None when empty."""
        return next(iter(self._items), None)

"""A map that keeps only its latest items: the one bound for every "remember the last N" in relaybot."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from typing import Generic, TypeVar, overload

K = TypeVar("K")
V = TypeVar("V")
D = TypeVar("D")


class RecentMap(Generic[K, V]):
    """At most `capacity` items; setting one makes it the newest, and past the bound the oldest goes.

    Reading with `get` leaves the order alone; `touch` (or `get(key, fresh=True)`) marks an item used, for
    least-recently-used caches."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"a RecentMap holds at least one item, not {capacity}")
        self.capacity = capacity
        self._items: OrderedDict[K, V] = OrderedDict()

    def __setitem__(self, key: K, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.capacity:
            self._items.popitem(last=False)

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
            self._items.move_to_end(key)
        return self._items[key]

    def touch(self, key: K) -> None:
        """Mark an item the newest, as if just set (a missing key is ignored)."""
        if key in self._items:
            self._items.move_to_end(key)

    def pop(self, key: K, default: V | None = None) -> V | None:
        """Remove an item and return its value, or `default` when absent."""
        return self._items.pop(key, default)

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

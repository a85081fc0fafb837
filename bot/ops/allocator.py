"""glibc's allocator held to a long-running gateway's shape: few malloc arenas, and the pages freed by a burst of turns
handed back to the system once the turns go quiet. Elsewhere (musl, macOS, Windows) both do nothing."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from bot.events import EventBus, TurnFinished, TurnStarted

logger = logging.getLogger(__name__)

ARENAS = 2  # glibc's default is 8 a core; each worker thread that allocates may take one and keep its pages
M_ARENA_MAX = -8  # mallopt's parameter number (malloc.h)
QUIET = 0.5  # seconds without a running turn before freed pages are handed back
MIN_GAP = 10.0  # seconds between two trims: a busy bot trims at most this often


def _glibc() -> Any | None:
    """The C library when it is glibc (whose mallopt and malloc_trim this module calls) and MALLOC_ARENA_MAX does not
    say the operator tunes it themselves, else None."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return None
    try:
        os.confstr("CS_GNU_LIBC_VERSION")
    except (AttributeError, ValueError, OSError):
        return None
    import ctypes  # only where it is used: a few milliseconds of import at start

    return ctypes.CDLL(None)


def limit_arenas(arenas: int = ARENAS) -> bool:
    """At most `arenas` malloc arenas for this process from now on, unless MALLOC_ARENA_MAX says otherwise; whether
    the limit was set. Called before the gateway starts its threads."""
    libc = _glibc()
    return libc is not None and libc.mallopt(M_ARENA_MAX, arenas) == 1


class QuietTrim:
    """Calls malloc_trim once no turn has run for `quiet` seconds (at most once every `gap`): a burst of chats leaves
    the allocator holding pages it no longer uses, which resident memory would count for the process's life."""

    def __init__(
        self,
        events: EventBus,
        quiet: float = QUIET,
        gap: float = MIN_GAP,
        trim: Callable[[], object] | None = None,
    ) -> None:
        """`trim` frees the pages (glibc's `malloc_trim(0)` unless given); without one nothing listens."""
        libc = _glibc()
        self._free = trim if trim is not None else (partial(libc.malloc_trim, 0) if libc is not None else None)
        self.trims = 0  # trims done, for the operator's figures and the tests
        self._quiet = quiet
        self._gap = gap
        self._running = 0
        self._last = -gap
        self._timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None
        self._unsubscribe = events.subscribe(self._on_event, TurnStarted, TurnFinished) if self._free else None

    @property
    def scheduled(self) -> bool:
        """Whether a trim waits for the quiet spell to end."""
        return self._timer is not None

    def _on_event(self, event: object) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if isinstance(event, TurnStarted):
            self._running += 1
            return
        self._running = max(0, self._running - 1)
        if self._running == 0:
            due = max(self._quiet, self._last + self._gap - time.monotonic())
            self._timer = asyncio.get_running_loop().call_later(due, self._trim)

    def _trim(self) -> None:
        self._timer = None
        if self._free is None or self._running or (self._task is not None and not self._task.done()):
            return
        self._last = time.monotonic()
        self._task = asyncio.get_running_loop().create_task(self._run(self._free))

    async def _run(self, free: Callable[[], object]) -> None:
        await asyncio.to_thread(free)  # it walks the heap under the allocator's locks: off the event loop
        self.trims += 1

    async def stop(self) -> None:
        """Stop listening; a trim under way finishes."""
        if self._unsubscribe is not None:
            self._unsubscribe()
        if self._timer is not None:
            self._timer.cancel()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)

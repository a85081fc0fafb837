"""One memory writer per scope: an asyncio lock in one process, a Redis lock across the processes of a cluster."""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from bot.cluster.redis import RedisState
from bot.memory.files import MemoryScope

logger = logging.getLogger(__name__)

LOCK_TIMEOUT = 300.0
WAIT_TIMEOUT = 60.0


class ScopeLocks:
    """In-process locks, one per scope folder while held or awaited; `hold` yields whether it was taken (always, here).

    A lock nobody holds or waits for is forgotten (weak values), so the map never grows with every chat ever seen.
    """

    def __init__(self) -> None:
        self._locks: weakref.WeakValueDictionary[Path, asyncio.Lock] = weakref.WeakValueDictionary()

    @property
    def held(self) -> int:
        """How many scope locks exist (held or awaited)."""
        return len(self._locks)

    @asynccontextmanager
    async def hold(self, scope: MemoryScope) -> AsyncIterator[bool]:
        """Hold the scope's lock for a read-ask-write round of MEMORY.md and HISTORY.md."""
        lock = self._locks.get(scope.directory)
        if lock is None:
            lock = self._locks[scope.directory] = asyncio.Lock()
        async with lock:
            yield True


class RedisScopeLocks(ScopeLocks):
    """A redis-py lock per scope, named by its folder relative to the shared workspace, under the in-process one.

    The Redis lock expires after `timeout` (a holder that died frees the scope); a waiter gives up
    after `wait` and `hold` yields False, so the round is tried again after a later turn.
    """

    def __init__(
        self, shared: RedisState, workspace: Path, timeout: float = LOCK_TIMEOUT, wait: float = WAIT_TIMEOUT
    ) -> None:
        super().__init__()
        self._shared = shared
        self._workspace = workspace
        self._timeout = timeout
        self._wait = wait

    def name(self, scope: MemoryScope) -> str:
        """The lock's key: the same on every machine that mounts the workspace, wherever it is mounted."""
        return self._shared.key("memory-lock", scope.directory.relative_to(self._workspace).as_posix())

    @asynccontextmanager
    async def hold(self, scope: MemoryScope) -> AsyncIterator[bool]:
        from redis.exceptions import LockError

        async with super().hold(scope):
            lock = self._shared.aclient.lock(self.name(scope), timeout=self._timeout, blocking_timeout=self._wait)
            if not await lock.acquire():
                logger.info("memory of %s is being written elsewhere; trying again later", scope.directory)
                yield False
                return
            try:
                yield True
            finally:
                try:
                    await lock.release()
                except LockError:
                    logger.warning("the memory lock of %s expired before its round ended", scope.directory)

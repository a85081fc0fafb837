"""One gateway per home: an exclusive lock file, held for the life of the process."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from bot.errors import BotError


class AlreadyRunning(BotError):
    """Another gateway holds this home's lock; `pid` names it."""

    def __init__(self, path: Path, pid: str) -> None:
        super().__init__(f"relaybot is already running for this home (pid {pid or 'unknown'}; lock {path})")
        self.pid = pid


class GatewayLock:
    """`fcntl.flock` on the lock file; the kernel releases it when the process dies, even by SIGKILL."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock and write our pid in the file; AlreadyRunning when another process holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
            os.close(fd)
            raise AlreadyRunning(self.path, holder) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> GatewayLock:
        self.acquire()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()

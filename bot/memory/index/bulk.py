"""Indexing a big backlog of one local session log in a child process at low CPU priority: the gateway's event loop
then shares neither its GIL nor its share of the CPU with the work (a thread stalled it for 100-400 ms under load).
The child gets a session of its own, so a scheduler that groups processes by session weighs it apart.

Run as `python -m bot.memory.index.bulk INDEX SESSIONS KEY LOG live|archived`; it indexes the log from where the
index stopped, in the same transactions a catch-up uses, so a process indexing beside it loses nothing.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

logger = logging.getLogger(__name__)

BULK_BYTES = 4_000_000  # a backlog this big (about 8,000 messages) is indexed in a child process
NICE = 10


class ChildIndexer:
    """Indexes a big backlog of a local session log in a child process and waits for it (call it off the loop)."""

    def __init__(self, sessions: Path, threshold: int = BULK_BYTES) -> None:
        self._sessions = sessions
        self.threshold = threshold

    def __call__(self, index: Path, key: str, log: str, live: bool) -> None:
        command = [sys.executable, "-m", __name__, str(index), str(self._sessions), key, log]
        command.append("live" if live else "archived")
        done = subprocess.run(
            command, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False, start_new_session=True
        )
        if done.returncode:
            tail = done.stderr.strip().splitlines()[-1:] or ["no output"]
            logger.error("[%s] indexing a big session log in a child process failed: %s", key, tail[0])


def main(arguments: list[str]) -> None:
    """The child's work: one log of one session into one index, at low priority."""
    from bot.memory.index.catchup import read_log
    from bot.memory.index.store import MemoryIndex
    from bot.sessions.logs import Cursor, FileLogs

    index_path, sessions, key, log, state = arguments
    os.nice(NICE)
    index = MemoryIndex.open(Path(index_path))
    try:
        cursor = index.cursors(key).get(log, (Cursor(log), False))[0]
        read_log(index, FileLogs(Path(sessions)), key, cursor, live=state == "live")
    finally:
        index.close()


if __name__ == "__main__":
    main(sys.argv[1:])

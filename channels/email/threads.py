"""What a reply in each mail thread needs (subject, References), kept on disk so replies after a restart thread too."""

from __future__ import annotations

import json
import logging
from collections import OrderedDict
from dataclasses import asdict, dataclass
from pathlib import Path

from bot.storage.private_file import write_private
from channels.email.parse import Mail, thread_key

logger = logging.getLogger(__name__)

REFERENCES_KEPT = 20  # the root and the latest: enough for every client to thread
THREADS_CACHED = 512


@dataclass(frozen=True, slots=True)
class Thread:
    """One thread's subject and References chain, the latest mail's id last."""

    subject: str
    references: tuple[str, ...]

    @property
    def latest(self) -> str:
        """The Message-ID a reply answers."""
        return self.references[-1]


class ThreadBook:
    """Threads by session thread id: one small JSON file each in `folder`, the recent ones cached."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._cache: OrderedDict[str, Thread] = OrderedDict()

    def note(self, mail: Mail) -> str:
        """Record a mail in its thread; returns the thread's session id."""
        key = thread_key(mail.thread)
        known = self.get(key)
        chain = mail.references if known is None else (*known.references, *mail.references)
        unique = tuple(dict.fromkeys(chain))
        kept = unique if len(unique) <= REFERENCES_KEPT else (unique[0], *unique[-(REFERENCES_KEPT - 1) :])
        self._save(key, Thread(known.subject if known and known.subject else mail.subject, kept))
        return key

    def started(self, subject: str, message_id: str) -> str:
        """Record a thread the bot started with its mail `message_id`; returns the thread's session id."""
        key = thread_key(message_id)
        self._save(key, Thread(subject, (message_id,)))
        return key

    def sent(self, key: str, message_id: str) -> None:
        """Add one of our own mails to the thread, so the next reply references it too."""
        known = self.get(key)
        if known is not None:
            self._remember(key, Thread(known.subject, (*known.references, message_id)[-REFERENCES_KEPT:]))

    def get(self, key: str) -> Thread | None:
        """The thread, from the cache or its file; None when it was never seen (or its file is unreadable)."""
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        path = self._folder / f"{key}.json"
        try:
            data = json.loads(path.read_text())
            thread = Thread(str(data["subject"]), tuple(data["references"]))
        except FileNotFoundError:
            return None
        except (ValueError, KeyError, TypeError) as exc:
            logger.warning("email: thread file %s unreadable (%s); replying without its history", path, exc)
            return None
        self._remember(key, thread)
        return thread

    def _save(self, key: str, thread: Thread) -> None:
        self._remember(key, thread)
        write_private(self._folder / f"{key}.json", json.dumps(asdict(thread)))

    def _remember(self, key: str, thread: Thread) -> None:
        self._cache[key] = thread
        self._cache.move_to_end(key)
        while len(self._cache) > THREADS_CACHED:
            self._cache.popitem(last=False)

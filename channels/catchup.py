"""Chats active lately and the last platform message seen in each, so a restart can read what it missed."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from bot.bus import ChatRef
from bot.storage.private_file import write_private
from bot.storage.recent import RecentMap

logger = logging.getLogger(__name__)

CATCH_UP_WINDOW = 24 * 3600.0
CATCH_UP_LIMIT = 20
CATCH_UP_CHATS = 200  # the chats active most lately that a restart reads; older ones are forgotten


@dataclass(frozen=True, slots=True)
class ActiveChat:
    """One chat with the id (Discord snowflake, Slack ts) of the last message seen in it."""

    chat: ChatRef
    last_id: str
    seen_at: float


class RecentChats(Protocol):
    """Where a channel notes its active chats: a file in `state_dir` (`ActiveChats`) or Redis (`RedisActiveChats`)."""

    def seen(self, chat: ChatRef, message_id: str) -> None: ...
    def recent(self) -> list[ActiveChat]: ...


class ActiveChats:
    """A channel's chats seen within `window` seconds, at most `limit` of them, kept in one JSON file in `state_dir`."""

    def __init__(
        self,
        path: Path,
        window: float = CATCH_UP_WINDOW,
        clock: Callable[[], float] = time.time,
        limit: int = CATCH_UP_CHATS,
    ) -> None:
        self._path = path
        self._window = window
        self._clock = clock
        self._limit = limit
        self._chats: RecentMap[str, ActiveChat] = self._load()

    @property
    def tracked(self) -> int:
        """How many chats are remembered."""
        return len(self._chats)

    def seen(self, chat: ChatRef, message_id: str) -> None:
        """Record `message_id` as the last one seen in `chat`, now; the chat least lately active past `limit` goes."""
        self._chats[chat.session_key] = ActiveChat(chat, message_id, self._clock())  # in order of activity
        self._save()

    def recent(self) -> list[ActiveChat]:
        """The chats seen within the window, oldest activity first."""
        since = self._clock() - self._window
        return sorted((c for c in self._chats.values() if c.seen_at >= since), key=lambda c: c.seen_at)

    def _load(self) -> RecentMap[str, ActiveChat]:
        chats: RecentMap[str, ActiveChat] = RecentMap(self._limit)
        try:
            rows = json.loads(self._path.read_text())
        except FileNotFoundError:
            return chats
        except (OSError, ValueError) as exc:
            logger.warning("%s is unreadable (%s); no catch-up this time", self._path, exc)
            return chats
        for row in sorted(rows, key=lambda row: float(row["seen_at"])):
            chat = ChatRef(row["channel"], row["chat_id"], row.get("thread_id"), row.get("account"))
            chats[chat.session_key] = ActiveChat(chat, row["last_id"], float(row["seen_at"]))
        return chats

    def _save(self) -> None:
        since = self._clock() - self._window
        for old in [key for key, c in self._chats.items() if c.seen_at < since]:
            self._chats.pop(old)
        rows = [
            {
                "channel": c.chat.channel,
                "chat_id": c.chat.chat_id,
                "thread_id": c.chat.thread_id,
                "account": c.chat.account,
                "last_id": c.last_id,
                "seen_at": c.seen_at,
            }
            for c in self._chats.values()
        ]
        write_private(self._path, json.dumps(rows))

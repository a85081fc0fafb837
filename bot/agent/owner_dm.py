"""The direct chat in which an owner wrote most recently: where the heartbeat may speak without a target."""

from __future__ import annotations

import json
import logging
from dataclasses import asdict
from pathlib import Path
from typing import Protocol

from bot.bus import ChatRef, InboundMessage, Trust
from bot.cluster.redis import RedisState
from bot.storage.private_file import write_private

logger = logging.getLogger(__name__)

UNREACHABLE_CHANNELS = frozenset({"console"})


class OwnerDM(Protocol):
    """Where the latest owner DM is remembered: a file in one process, Redis across a cluster."""

    @property
    def chat(self) -> ChatRef | None: ...

    def note(self, message: InboundMessage) -> None: ...


def counts(message: InboundMessage) -> bool:
    """Whether a message is an owner's own direct message on a channel the bot can write to first."""
    if message.kind != "user" or message.trust is not Trust.OWNER or not message.is_direct:
        return False
    return message.chat.channel not in UNREACHABLE_CHANNELS


class LastOwnerDM:
    """Remembers the latest owner DM in a small JSON file (0600, replaced atomically) so it survives restarts."""

    def __init__(self, path: Path | None = None) -> None:
        self._path = path
        self._chat = self._load()

    @property
    def chat(self) -> ChatRef | None:
        """The remembered chat, or None when no owner has written in a DM yet."""
        return self._chat

    def note(self, message: InboundMessage) -> None:
        """Remember the message's chat when an owner wrote it directly; groups and system messages never count."""
        if not counts(message) or message.chat == self._chat:
            return
        self._chat = message.chat
        if self._path is not None:
            self._save(self._path, message.chat)

    def _load(self) -> ChatRef | None:
        if self._path is None or not self._path.exists():
            return None
        try:
            return ChatRef(**json.loads(self._path.read_text(encoding="utf-8")))
        except (ValueError, TypeError):
            logger.warning("%s is unreadable; no owner DM is known until an owner writes again", self._path)
            return None

    @staticmethod
    def _save(path: Path, chat: ChatRef) -> None:
        write_private(path, json.dumps(asdict(chat)))


class RedisOwnerDM:
    """The latest owner DM in one Redis key, so the process leading the scheduler sees DMs any worker took."""

    def __init__(self, shared: RedisState) -> None:
        self._shared = shared
        self._key = shared.key("owner-dm")

    @property
    def chat(self) -> ChatRef | None:
        """The remembered chat, read from Redis, or None when no owner has written in a DM yet."""
        raw = self._shared.client.get(self._key)
        if raw is None:
            return None
        try:
            return ChatRef(**json.loads(raw))
        except (ValueError, TypeError):
            logger.warning("%s is unreadable; no owner DM is known until an owner writes again", self._key)
            return None

    def note(self, message: InboundMessage) -> None:
        """Remember the message's chat when an owner wrote it directly (another worker may have noted another).

        The write goes with this process's next Redis command (the turn's session read), not a round trip of its own.
        """
        if counts(message):
            self._shared.defer("SET", self._key, json.dumps(asdict(message.chat)))

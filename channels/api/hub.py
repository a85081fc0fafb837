"""Fans each API session's frames out to whoever watches it: WebSocket connections and pending HTTP requests."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import Protocol

from bot.bus import ChatRef
from channels.api.frames import Frame
from channels.api.web.auth import Caller
from channels.api.web.gate import Gatekeeper

CHANNEL = "api"
OWNERS = "owners"
"""The topic every owner's WebSocket watches: what belongs to no session, such as heartbeat ticks."""


def session_chat(caller: Caller, session: str | None) -> ChatRef:
    """The chat of a caller's session: `api:<token name>:<session>`."""
    return ChatRef(CHANNEL, caller.name, (session or "default").strip()[:64] or "default")


class Hub:
    """Watchers per session key."""

    def __init__(self) -> None:
        self._watchers: dict[str, set[asyncio.Queue[Frame]]] = defaultdict(set)

    def watch(self, key: str, queue: asyncio.Queue[Frame] | None = None) -> asyncio.Queue[Frame]:
        """A queue (`queue`, or a fresh one) receiving every frame of `key` (a session, a run) from now on."""
        queue = asyncio.Queue() if queue is None else queue
        self._watchers[key].add(queue)
        return queue

    def unwatch(self, key: str, queue: asyncio.Queue[Frame]) -> None:
        """Stop feeding a queue."""
        watchers = self._watchers.get(key)
        if watchers is not None:
            watchers.discard(queue)
            if not watchers:
                del self._watchers[key]

    def emit(self, key: str, frame: Frame) -> None:
        """Hand a frame to every watcher of its session."""
        for queue in self._watchers.get(key, ()):
            queue.put_nowait(frame)


class ApiSessions(Protocol):
    """What the routes need of the API channel: authentication, session frames, submitting text, history."""

    gate: Gatekeeper
    hub: Hub

    async def submit(self, caller: Caller, chat: ChatRef, text: str, client_id: str | None = None) -> str:
        """Publish a caller's text to its session; returns the client id the reply will name."""

    def history(self, key: str) -> list[Frame]:
        """The session's recent user texts and replies."""

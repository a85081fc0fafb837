"""Slack's signs of progress: reactions on a user's message and the assistant thread's "is thinking…" status."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from typing import Any

from bot.bus import ChatRef
from bot.errors import ChannelError
from bot.storage.recent import RecentMap
from channels.abilities import ReactionStatus
from channels.slack.send import split_id
from channels.streaming import PlatformCall

logger = logging.getLogger(__name__)

MARKS: dict[ReactionStatus, str] = {"seen": "eyes", "done": "white_check_mark", "failed": "x"}
THINKING = "is thinking…"
STATUS_REFRESH = 60.0  # Slack clears a status after two minutes, or when the bot posts in the thread
NO_STATUS_ERRORS = frozenset({"missing_scope", "not_allowed_token_type", "unknown_method", "method_deprecated"})
THREADS_KEPT = 1024
MESSAGE_TS = re.compile(r"\d+\.\d+")


class SlackStatus:
    """Reactions (reactions.add/remove) and assistant.threads.setStatus, skipped for good once Slack refuses it."""

    def __init__(self, client: Any, call: PlatformCall, clock: Callable[[], float] = time.monotonic) -> None:
        self._client = client
        self._call = call
        self._clock = clock
        self._status_refused = False
        self._status_set: RecentMap[str, tuple[float, str]] = RecentMap(THREADS_KEPT)  # key -> (when, thread_ts)
        self._last_asked: RecentMap[str, str] = RecentMap(THREADS_KEPT)

    async def react(self, chat: ChatRef, message_id: str, status: ReactionStatus) -> None:
        """👀 when seen; then ✅ or ❌ in its place; a refused reaction is logged, never raised."""
        channel, ts = split_id(message_id)
        if not MESSAGE_TS.fullmatch(ts) or ":" in channel:
            return  # a slash command (`C1:command:<trigger>`) has no message of its own to mark
        try:
            if status != "seen":
                await self._reaction("reactions_remove", channel, ts, MARKS["seen"])
            await self._reaction("reactions_add", channel, ts, MARKS[status])
        except ChannelError as exc:
            logger.info("[%s] reaction %s on %s failed: %s", chat.session_key, status, message_id, exc)

    async def _reaction(self, method: str, channel: str, ts: str, name: str) -> None:
        try:
            await self._call(lambda: getattr(self._client, method)(channel=channel, timestamp=ts, name=name))
        except ChannelError as exc:
            if exc.code not in ("already_reacted", "no_reaction"):
                raise

    def asked(self, chat: ChatRef, message_ts: str) -> None:
        """Note the latest user message of a DM: a live reply there, and so the status, threads under it."""
        self._last_asked[chat.session_key] = message_ts

    async def replied(self, chat: ChatRef, posted_in: str | None) -> None:
        """A message went to `chat`, in thread `posted_in`: Slack clears a status there; one elsewhere we clear."""
        entry = self._status_set.pop(chat.session_key, None)
        if entry is None or entry[1] == posted_in:
            return
        thread_ts = entry[1]  # a DM's reply posted in the conversation, not under the message it answers
        try:
            await self._call(
                lambda: self._client.assistant_threads_setStatus(
                    channel_id=chat.chat_id, thread_ts=thread_ts, status=""
                )
            )
        except ChannelError as exc:
            logger.info("[%s] could not clear the thinking status: %s", chat.session_key, exc)

    async def show_thinking(self, chat: ChatRef, threads_dms: bool) -> None:
        """Set "is thinking…" on the chat's thread (a DM's latest message when replies thread there), once a minute."""
        thread_ts = chat.thread_id or (self._last_asked.get(chat.session_key) if threads_dms else None)
        if self._status_refused or thread_ts is None:
            return
        key = chat.session_key
        now = self._clock()
        if now - self._status_set.get(key, (-STATUS_REFRESH, ""))[0] < STATUS_REFRESH:
            return
        try:
            await self._call(
                lambda: self._client.assistant_threads_setStatus(
                    channel_id=chat.chat_id, thread_ts=thread_ts, status=THINKING
                )
            )
        except ChannelError as exc:
            if exc.code in NO_STATUS_ERRORS:
                self._status_refused = True
                logger.info("slack: no thinking status (%s); give the app the chat:write scope", exc)
                return
            raise
        self._status_set[key] = (now, thread_ts)

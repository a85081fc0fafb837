"""The first mention in a thread the bot has not seen: the thread's parent as the quote, earlier replies as context."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from bot.bus import Attachment, GroupLine, Quote
from bot.cancelling import cancel_and_wait
from bot.errors import ChannelError
from bot.storage.recent import RecentMap
from channels.media import MediaRef
from channels.slack.parse import files_of, without_mention
from channels.streaming import PlatformCall

logger = logging.getLogger(__name__)

QUOTE_LIMIT = 1000
CONTEXT_MESSAGES = 20
CONTEXT_CHARS = 4000
FETCH_LIMIT = 200  # one conversations.replies page; only the last CONTEXT_MESSAGES before the mention are kept
THREADS_KEPT = 1024


@dataclass(frozen=True, slots=True)
class ThreadStart:
    """What a thread held before the bot was first mentioned in it."""

    parent: Quote | None = None
    earlier: tuple[GroupLine, ...] = ()


def thread_start(
    messages: list[dict[str, Any]], thread_ts: str, mention_ts: str, bot_user_id: str, names: Mapping[str, str]
) -> ThreadStart:
    """The parent of `thread_ts` as a Quote and up to CONTEXT_MESSAGES replies before `mention_ts` (4,000 chars)."""
    parent, earlier = None, []
    for message in sorted(messages, key=lambda m: float(m.get("ts", 0))):
        author = message.get("user") or message.get("bot_id") or ""
        text = without_mention(message.get("text") or "", bot_user_id)
        if message.get("ts") == thread_ts:
            parent = Quote(
                text=_clip(text, QUOTE_LIMIT),
                author_id=author or None,
                author_name=names.get(author) or None,
                from_bot=author == bot_user_id,
                platform_message_id=f"{message.get('channel', '')}:{thread_ts}" if message.get("channel") else None,
            )
        elif float(message.get("ts", 0)) < float(mention_ts) and text:
            earlier.append(GroupLine(author, names.get(author) or None, text, float(message["ts"])))
    kept: list[GroupLine] = []
    budget = CONTEXT_CHARS
    for line in reversed(earlier[-CONTEXT_MESSAGES:]):
        if len(line.text) > budget:
            break
        kept.append(line)
        budget -= len(line.text)
    return ThreadStart(parent, tuple(reversed(kept)))


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ThreadReader:
    """Reads each thread once (conversations.replies), for the first mention in it; later mentions get nothing."""

    def __init__(
        self,
        client: Any,
        call: PlatformCall,
        bot_user_id: str,
        name_of: Callable[[str], Awaitable[str | None]],
        save_image: Callable[[str, MediaRef], Awaitable[Attachment | None]],
    ) -> None:
        self._client = client
        self._call = call
        self._bot_user_id = bot_user_id
        self._name_of = name_of
        self._save_image = save_image
        self._reads: RecentMap[str, tuple[str, asyncio.Task[ThreadStart]]] = RecentMap(THREADS_KEPT)

    async def first_mention(self, channel: str, thread_ts: str, mention_ts: str) -> ThreadStart:
        """The thread's start for the mention `mention_ts`; the same for its twin event, empty for a later mention."""
        key = f"{channel}:{thread_ts}"
        if key not in self._reads:
            task = asyncio.create_task(self._read(channel, thread_ts, mention_ts), name=f"slack-thread:{key}")
            self._reads[key] = (mention_ts, task)
        first_ts, read = self._reads[key]
        return await asyncio.shield(read) if first_ts == mention_ts else ThreadStart()

    async def close(self) -> None:
        """Cancel the reads still running and wait for them."""
        await cancel_and_wait(*(read for _, read in self._reads.values()))
        self._reads = RecentMap(THREADS_KEPT)

    async def _read(self, channel: str, thread_ts: str, mention_ts: str) -> ThreadStart:
        client = self._client
        try:
            answer = await self._call(
                lambda: client.conversations_replies(
                    channel=channel, ts=thread_ts, latest=mention_ts, inclusive=False, limit=FETCH_LIMIT
                )
            )
        except ChannelError as exc:
            logger.info("slack: could not read thread %s:%s: %s", channel, thread_ts, exc)
            return ThreadStart()
        messages = [{**m, "channel": channel} for m in answer.get("messages") or []]
        names: dict[str, str] = {}
        for author in {str(m["user"]) for m in messages if m.get("user")}:
            if name := await self._name_of(author):
                names[author] = name
        start = thread_start(messages, thread_ts, mention_ts, self._bot_user_id, names)
        parent = next((m for m in messages if m.get("ts") == thread_ts), {})
        image = next((media for media in files_of(parent) if media.kind == "image"), None)
        if start.parent is None or image is None:
            return start
        return replace(start, parent=replace(start.parent, image=await self._save_image(channel, image)))

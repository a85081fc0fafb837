"""Memory that stops growing per chat: thousands of one-message chats through the gateway's path in this process.

Each chat is a different stranger's DM on a channel named `telegram`, published as the Telegram channel does:
through the channel manager's dedupe, access policy and flood limit, the journaled bus, the agent loop (lanes,
edits, sessions) with an instant model, the outbox and delivery, to a channel that keeps the Telegram channel's
reply map. The count bounds on that path (the inbound dedupe, the ids edits may name, the reply map, the session
cache) are lowered to BOUND so they are full before the first snapshot: what is kept in each window between two
snapshots is what grows with the number of chats. `python bench/memory.py --gateway-only` measures them at their
real sizes.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import os
import tempfile
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from bot.access.activation import Activations
from bot.access.flood import SenderRateLimit
from bot.app.agent_wiring import AgentApp
from bot.app.backend import stores_for
from bot.app.channel_kinds import ChatBot
from bot.app.chat_channels import access_policies
from bot.app.rosters import answering
from bot.bus import ChatRef, InboundMessage, OutboundMessage
from bot.config.schema import Config
from bot.llm.types import LLMResponse, Usage
from channels.base import Channel
from channels.gateway.manager import ChannelManager
from channels.sent_replies import SentReplies

BOUND = 50  # each count bound on the path, lowered from 1,000-1,024 so a few hundred chats fill them all
FILLED = 300  # chats before the first snapshot
MEASURED = 1_200  # chats between two snapshots: enough that SQLite's dead cursor references (up to 200 a
# connection, about 16 KB, pruned every 200th cursor) stay below PER_CHAT_BYTES a chat whatever their phase
WINDOWS = 2  # measured windows, one after another
PER_CHAT_BYTES = 48  # a forgotten bound keeps 100-300 bytes a chat; what bounded memories leave is noise below 20
AT_ONCE = 100
RAM_DISK = Path("/dev/shm")


class InstantModel:
    """A model that answers every request at once, so the test measures relaybot's own state alone."""

    model = "openai/instant"

    async def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        on_delta: Any = None,
        max_tokens: int | None = None,
    ) -> LLMResponse:
        return LLMResponse("noted", usage=Usage(prompt_tokens=200, completion_tokens=2))


class RememberingChannel(Channel):
    """Stands in for Telegram: each reply is recorded in the Telegram channel's reply map and resolves its waiter."""

    name: ClassVar[str] = "telegram"

    def __init__(self) -> None:
        self.replies: SentReplies[tuple[str, str]] = SentReplies(BOUND)
        self.waiting: dict[str, asyncio.Future[None]] = {}
        self._sent = 0

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        pass

    async def send(self, message: OutboundMessage) -> None:
        self._sent += 1
        if message.reply_to_platform_id:
            self.replies.add((message.chat.chat_id, message.reply_to_platform_id), str(self._sent))
        if (waiter := self.waiting.pop(message.chat.chat_id, None)) is not None:
            waiter.set_result(None)


class SecondClock:
    """A monotonic clock a second ahead at every reading: one chat a second, so the flood limiter forgets."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


async def one_message_chats(manager: ChannelManager, channel: RememberingChannel, first: int, count: int) -> None:
    """`count` chats, each a different stranger's single DM, AT_ONCE at a time, each answered before the next batch."""
    publish = manager.publisher("telegram")
    loop = asyncio.get_running_loop()
    for start in range(first, first + count, AT_ONCE):
        waiters = []
        for n in range(start, min(first + count, start + AT_ONCE)):
            chat = str(10_000 + n)
            waiters.append(channel.waiting.setdefault(chat, loop.create_future()))
            await publish(InboundMessage(ChatRef("telegram", chat), chat, f"hello {n}", platform_message_id=str(n)))
        async with asyncio.timeout(30):
            await asyncio.gather(*waiters)


def traced() -> tracemalloc.Snapshot:
    gc.collect()
    return tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    """Where the chats' files go: RAM-backed /dev/shm when writable (the test weighs the heap, and the files'
    syncs on a disk were half its time), else `tmp_path`."""
    if not os.access(RAM_DISK, os.W_OK):
        yield tmp_path
        return
    with tempfile.TemporaryDirectory(dir=RAM_DISK, prefix="relaybot-bounds-") as directory:
        yield Path(directory)


def gateway_config(tmp_path: Path) -> Config:
    return Config.model_validate(
        {
            "workspace": tmp_path / "workspace",
            "state_dir": tmp_path / "state",
            "llm": {"model": "openai/instant", "api_key": "sk-test"},
            "agent": {"session_cache_size": BOUND},
            "channels": {"telegram": {"dm_policy": "open"}},
            "heartbeat": {"enabled": False},
            "shutdown_grace": 0.2,
        }
    )


async def test_the_gateway_path_keeps_nothing_per_chat_once_its_bounded_memories_are_full(home: Path) -> None:
    config = gateway_config(home)
    stores = stores_for(config)
    app = AgentApp(config, InstantModel(), stores.bus(), stores=stores, edits_remembered=BOUND)
    bots = [ChatBot("telegram", None, config.channels.telegram)]
    access = access_policies(config, app, bots, stores.ignore_notices(), Activations(stores.chat_settings()))
    rate_limit = SenderRateLimit(config.access.rate_limit, clock=SecondClock())
    manager = ChannelManager(app.bus, app.events, access, rate_limit=rate_limit, remembered=BOUND)
    channel = RememberingChannel()
    manager.add(channel)
    async with answering(app):
        await manager.start()
        tracemalloc.start(1)
        try:
            await one_message_chats(manager, channel, 0, FILLED)
            snapshots = [traced()]
            for window in range(WINDOWS):
                await one_message_chats(manager, channel, FILLED + window * MEASURED, MEASURED)
                snapshots.append(traced())
        finally:
            tracemalloc.stop()
            await manager.stop()
    # What a chat keeps grows in every window; a one-off (a set resized, floats on the free list) in one only.
    growths = [after.compare_to(before, "lineno") for before, after in itertools.pairwise(snapshots)]
    growth = min(growths, key=lambda stats: sum(stat.size_diff for stat in stats))
    grown = sum(stat.size_diff for stat in growth)
    top = "\n".join(str(stat) for stat in growth[:5])
    assert grown < MEASURED * PER_CHAT_BYTES, f"{grown:,} bytes kept over {MEASURED} more chats, by line:\n{top}"

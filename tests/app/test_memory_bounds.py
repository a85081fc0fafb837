"""Memory that stops growing per chat: thousands of one-message chats through the whole agent app in this process."""

from __future__ import annotations

import asyncio
import gc
import tracemalloc
from pathlib import Path
from typing import Any

from bot.app.agent_wiring import AgentApp
from bot.bus import ChatRef, InboundMessage, OutboundMessage, Trust
from bot.config.schema import Config
from bot.llm.types import LLMResponse, Usage

PER_CHAT_BYTES = 1024 * 1024 // 3000  # the bound: 1 MB for 3,000 more chats
AT_ONCE = 100
MEASURED = 600


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


async def one_message_chats(app: AgentApp, first: int, count: int) -> None:
    """`count` chats, each a different stranger's single DM, AT_ONCE at a time, each answered before the next batch."""
    waiting: dict[str, asyncio.Future[OutboundMessage]] = {}

    async def collect() -> None:
        while True:
            reply = await app.bus.consume_outbound()
            await app.bus.mark_sent(reply.id)
            future = waiting.pop(reply.in_reply_to or "", None)
            if future is not None:
                future.set_result(reply)

    collector = asyncio.create_task(collect())
    try:
        loop = asyncio.get_running_loop()
        for start in range(first, first + count, AT_ONCE):
            futures = []
            for n in range(start, min(first + count, start + AT_ONCE)):
                message = InboundMessage(ChatRef("telegram", str(10_000 + n)), str(n), f"hello {n}", trust=Trust.GUEST)
                futures.append(waiting.setdefault(message.id, loop.create_future()))
                await app.bus.publish_inbound(message)
            async with asyncio.timeout(30):
                await asyncio.gather(*futures)
    finally:
        collector.cancel()
        await asyncio.gather(collector, return_exceptions=True)


def traced_bytes() -> int:
    gc.collect()
    ours = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
    return sum(stat.size for stat in ours.statistics("filename"))


async def test_memory_stops_growing_with_the_number_of_chats(tmp_path: Path) -> None:
    config = Config.model_validate(
        {
            "workspace": tmp_path / "workspace",
            "state_dir": tmp_path / "state",
            "llm": {"model": "openai/instant", "api_key": "sk-test"},
            "agent": {"session_cache_size": 50},  # full long before the measured chats, as in a busy gateway
            "heartbeat": {"enabled": False},
            "shutdown_grace": 0.2,
        }
    )
    app = AgentApp(config, InstantModel())
    await app.start()
    try:
        await one_message_chats(app, 0, 200)
        tracemalloc.start()
        try:
            await one_message_chats(app, 200, 200)  # everything that is kept once is allocated by now
            before = traced_bytes()
            await one_message_chats(app, 400, MEASURED)
            grown = traced_bytes() - before
        finally:
            tracemalloc.stop()
    finally:
        await app.stop()
    assert grown < MEASURED * PER_CHAT_BYTES, f"{grown:,} bytes more after {MEASURED} more chats"

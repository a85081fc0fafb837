"""Time per turn in chats of 10, 1,000 and 10,000 messages, each built by really chatting.

Run from the repository root: python bench/long_session.py [--rounds 40]

One bot with `relaybot init`'s workspace and the default config (memory window 100) talks to the
fake model in its own process, which echoes chats and answers memory consolidation with a
save_memory call. Three chats are built turn by turn through the agent, as users would, with
consolidation running in the background as it does in use (the 10-message size is a fresh chat
each round, so it stays that size). Then each round gives every size one more turn, interleaved
(10, 1,000, 10,000, 10, …), so machine load hits all three alike. Printed per size: the median
turn, publish → reply, and the request the model got (bytes and messages).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from rig import Bot, FakeProcess, bench_config

import bot.llm.transports.openai_http as fastpath

SIZES = (10, 1_000, 10_000)


class Requests:
    """Every wire body the fast path sends (bench-only observation)."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        original = fastpath.OpenAICompatible.acompletion

        async def tapped(client: fastpath.OpenAICompatible, **request: Any) -> Any:
            self.bodies.append(fastpath.wire_body(request))
            return await original(client, **request)

        fastpath.OpenAICompatible.acompletion = tapped  # type: ignore[method-assign]

    def last_chat_request(self) -> dict[str, Any]:
        """The latest request that was a chat turn (not a consolidation)."""
        return next(b for b in reversed(self.bodies) if not is_consolidation(b))


def is_consolidation(body: dict[str, Any]) -> bool:
    return any(tool["function"]["name"] == "save_memory" for tool in body.get("tools") or [])


async def build(bot: Bot, chat: str, messages: int) -> None:
    """Chat until the session holds `messages` messages (two per turn)."""
    for turn in range(messages // 2):
        await bot.ask(chat, f"Question {turn}: what about the plan for day {turn}? " + "details " * 12)


async def main(rounds: int) -> None:
    logging.basicConfig(level=logging.ERROR)
    requests = Requests()
    with tempfile.TemporaryDirectory() as tmp, FakeProcess(0.0, consolidating=True) as fake:
        config = bench_config(Path(tmp), fake.base_url)
        async with Bot(config) as bot:
            started = time.perf_counter()
            small = [build(bot, f"telegram:{SIZES[0]}-{i}", SIZES[0]) for i in range(rounds)]
            await asyncio.gather(*(build(bot, f"telegram:{size}", size) for size in SIZES[1:]), *small)
            await bot.app.memory.idle()
            print(
                f"built chats of {', '.join(f'{s:,}' for s in SIZES)} messages in {time.perf_counter() - started:.0f} s"
            )
            times: dict[int, list[float]] = {size: [] for size in SIZES}
            sent: dict[int, list[tuple[int, int]]] = {size: [] for size in SIZES}
            for i in range(rounds):
                for size in SIZES:
                    chat = f"telegram:{size}-{i}" if size == SIZES[0] else f"telegram:{size}"
                    started = time.perf_counter()
                    await bot.ask(chat, f"One more thing, number {i}?")
                    times[size].append(time.perf_counter() - started)
                    body = requests.last_chat_request()
                    sent[size].append((len(json.dumps(body, ensure_ascii=False).encode()), len(body["messages"])))
            sessions = {size: bot.app.sessions.get(f"telegram:{size}") for size in SIZES[1:]}
            sessions[SIZES[0]] = bot.app.sessions.get(f"telegram:{SIZES[0]}-0")
            await bot.app.memory.idle()
    print(f"agent.memory_window = {config.agent.memory_window}; {rounds} interleaved rounds, median per turn:")
    for size in SIZES:
        session = sessions[size]
        kb = statistics.mean(b for b, _ in sent[size]) / 1024
        count = statistics.mean(m for _, m in sent[size])
        print(
            f"  {size:>6,}-message chat: {statistics.median(times[size]) * 1000:6.2f} ms per turn"
            f" | request {kb:5.1f} KB, {count:5.1f} messages"
            f" | session {session.total:,} messages, {session.total - session.base} in memory"
        )
    small, large = (statistics.median(times[s]) for s in (SIZES[0], SIZES[-1]))
    print(f"ratio 10,000 / 10: {large / small:.2f}x per turn")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40, help="interleaved timed rounds")
    asyncio.run(main(parser.parse_args().rounds))

"""Time per agent turn at session lengths 10, 1,000 and 10,000 messages, against a 0 ms fake LLM.

Run from the repository root: python bench/long_session.py [--rounds 12] [--block 5] [--memory-window 100]

Sessions are prefilled by writing their JSONL files directly: a mix of chat and tool exchanges.
A long session is written as a running bot leaves it: everything but the most recent three
quarters of `agent.memory_window` already consolidated (the average between consolidations).
Every block of turns runs on a fresh chat of the given length, loaded beforehand, so a
"10-message session" stays one. The three bots take their blocks in turn (10, 1,000, 10,000,
10, …) so that other load on the machine hits them alike. A turn is timed from publishing the
message to receiving the reply, through the real agent loop and the real litellm over HTTP to a
fake server in this process; the figure per size is its fastest block mean (timeit's convention).

Also printed: messages per request (history is bounded by agent.memory_window and the token
budget, not by the session's length, but a 10-message session has less to send, and litellm's
cost grows with the messages it is given); the agent's own time per turn (the turn minus the LLM
call); and, once per size, loading an unconsolidated session of that length plus consolidating
its whole backlog in the background.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from bot.agent.consolidation import keep_boundary
from bot.events import LLMCalled, TurnFinished
from tests.fakes.openai_server import FakeLLM, Reply, ToolCalls, echo
from tests.harness import Harness

SIZES = (10, 1_000, 10_000)


def answer(body: dict) -> Reply:
    """Consolidation requests get a save_memory call; chat requests an echo."""
    if is_consolidation(body):
        entry = {"history_entry": "Talked about the week's plans.", "memory_update": "# Memory\n\n- Plans a trip."}
        return ToolCalls((("save_memory", entry),))
    return echo(body)


def is_consolidation(body: dict) -> bool:
    return any(tool["function"]["name"] == "save_memory" for tool in body.get("tools") or [])


def conversation(count: int) -> list[dict]:
    """`count` messages; every third exchange uses a tool."""
    messages: list[dict] = []
    turn = 0
    while len(messages) < count:
        messages.append({"role": "user", "content": f"[telegram DM 42 · from 42]\nQuestion {turn}: " + "words " * 25})
        if turn % 3 == 0:
            function = {"name": "web_search", "arguments": '{"query": "x"}'}
            call = {"id": f"c{turn}", "type": "function", "function": function}
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
            result = {"role": "tool", "tool_call_id": f"c{turn}", "name": "web_search", "content": "result " * 40}
            messages.append(result)
        messages.append({"role": "assistant", "content": f"Answer {turn}: " + "text " * 30})
        turn += 1
    return messages[:count]


def prefill(sessions: Path, key: str, count: int, keep: int | None) -> None:
    """Write a session's JSONL; with `keep`, all but about that many recent messages are marked consolidated."""
    messages = conversation(count)
    records = [{"type": "message", "ts": 0, "message": m} for m in messages]
    upto = keep_boundary(messages, 0, keep) if keep is not None and count > keep else None
    if upto:
        records.append({"type": "consolidated", "upto": upto})
    sessions.mkdir(parents=True, exist_ok=True)
    (sessions / f"{quote(key, safe='')}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


class Subject:
    """One bot, measured on fresh chats that each start with `size` messages."""

    def __init__(self, size: int, root: Path, memory_window: int, rounds: int) -> None:
        self.size = size
        self.root = root
        self.memory_window = memory_window
        self.chats = [f"telegram:{i}" for i in range(rounds)]
        self.blocks: list[float] = []
        self.backlog = 0.0
        self._turns: list[float] = []
        self._llm: list[float] = []
        self._first_request = 0

    async def start(self, stack: contextlib.AsyncExitStack) -> None:
        """Prefill, measure one backlog consolidation, and load every chat before timing starts."""
        self.fake = await stack.enter_async_context(FakeLLM(default=answer))
        self.bot = Harness(self.root, self.fake, agent={"memory_window": self.memory_window})
        sessions = self.bot.config.state_dir / "sessions"
        prefill(sessions, "telegram:backlog", self.size, keep=None)
        for chat in self.chats:
            prefill(sessions, chat, self.size, keep=3 * self.memory_window // 4)
        await stack.enter_async_context(self.bot)
        started = time.perf_counter()
        await self.bot.ask("warm-up", chat="telegram:backlog", sender="42")
        await self.bot.app.memory.idle()
        self.backlog = time.perf_counter() - started
        for chat in self.chats:
            self.bot.app.sessions.get(chat)
        self._first_request = len(self.fake.requests)
        self.bot.app.events.subscribe(self._record)

    def _record(self, event: object) -> None:
        if isinstance(event, TurnFinished):
            self._turns.append(event.duration)
        elif isinstance(event, LLMCalled):
            self._llm.append(event.duration)

    async def block(self, turns: int) -> None:
        chat = self.chats[len(self.blocks)]
        started = time.perf_counter()
        for i in range(turns):
            await self.bot.ask(f"How about item {i}?", chat=chat, sender="42")
        self.blocks.append((time.perf_counter() - started) / turns)

    def per_turn(self) -> float:
        return min(self.blocks)

    def own_time(self) -> float:
        return statistics.median(t - llm for t, llm in zip(self._turns, self._llm, strict=True))

    def report(self) -> str:
        sent = [len(b["messages"]) for b in self.fake.requests[self._first_request :] if not is_consolidation(b)]
        return (
            f"{self.size:>6} messages: {self.per_turn() * 1000:6.2f} ms per turn"
            f" (median block {statistics.median(self.blocks) * 1000:6.2f})"
            f" | {statistics.mean(sent):5.1f} messages per request | agent's own time {self.own_time() * 1000:4.2f} ms"
            f" | load + backlog consolidation {self.backlog:5.2f} s"
        )


async def warm_up_process(root: Path) -> None:
    """One untimed turn, so lazy imports and first-call costs land on no figure."""
    async with FakeLLM(default=answer) as fake, Harness(root, fake) as bot:
        await bot.ask("hello")


async def main(rounds: int, block: int, memory_window: int) -> None:
    logging.basicConfig(level=logging.ERROR)
    print(f"agent.memory_window = {memory_window}; {rounds} blocks of {block} turns per size")
    with tempfile.TemporaryDirectory() as tmp:
        await warm_up_process(Path(tmp) / "warm-up")
        async with contextlib.AsyncExitStack() as stack:
            subjects = [Subject(size, Path(tmp) / str(size), memory_window, rounds) for size in SIZES]
            for subject in subjects:
                await subject.start(stack)
            for _ in range(rounds):
                for subject in subjects:
                    await subject.block(block)
            for subject in subjects:
                await subject.bot.app.memory.idle()
                print(subject.report())
    small, large = subjects[0], subjects[-1]
    print(
        f"ratio 10,000 / 10: {large.per_turn() / small.per_turn():.2f}x per turn, "
        f"{large.own_time() / small.own_time():.2f}x agent's own time"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=12, help="timed blocks per session size")
    parser.add_argument("--block", type=int, default=5, help="turns per block")
    parser.add_argument("--memory-window", type=int, default=100, help="agent.memory_window (the config default)")
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.block, args.memory_window))

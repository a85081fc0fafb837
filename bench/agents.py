"""Several agents in one gateway: memory per idle (and per once-used) agent, and turn overhead with 1 and 10 agents.

Run from the repository root: python bench/agents.py [--agents 51] [--rounds 200] [--only memory|overhead]

Memory: each count of agents (1 and `--agents`) runs in a fresh child process: a home made by
`relaybot init`, every agent but the default one bound to a chat of its own, the gateway's agents (the
default agent built, the router started) on the local bus with the fake model in a process of its own.
The child answers one message in the default agent's chat, collects garbage, reads its RSS and what
tracemalloc holds; then answers one message in every other agent's chat and reads them again. The
parent prints the difference per agent: idle (configured, never used) and once used.

Overhead: two gateways in this process, one with 1 agent and one with 10 (every chat bound to one of
them, all 10 built), asked in alternation, round by round (each first in half the rounds), in 10 group
chats (each its own memory scope either way); time from publish to reply, and the CPU of the whole
process per message. The fake model answers at once in its own process.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rig import ROOT, FakeProcess, bench_config, load_average, summary

from bot.bus import ChatRef, InboundMessage, OutboundMessage, Trust
from bot.config.schema import Config


def rss_kb() -> int:
    """This process's resident set size in KB (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def agents_config(home: Path, base_url: str, count: int) -> Config:
    """A home with `count` agents: the default one, and `count - 1` more each bound to Telegram chat 1000 + i."""
    agents = [{"name": f"agent{i}"} for i in range(1, count)]
    bindings = [{"agent": f"agent{i}", "channel": "telegram", "chat": str(1000 + i)} for i in range(1, count)]
    return bench_config(home, base_url, agents=agents, bindings=bindings, heartbeat={"enabled": False})


class Agents:
    """The gateway's agents without its channels: the default AgentApp and the router, replies matched by id."""

    def __init__(self, config: Config) -> None:
        from bot.app.agent_wiring import AgentApp
        from bot.app.rosters import agent_roster

        self.default = AgentApp(config)
        self.roster = agent_roster(config, self.default)
        self.waiters: dict[str, asyncio.Future[OutboundMessage]] = {}
        self._collector: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Agents:
        await self.default.start()
        await self.roster.start()
        self._collector = asyncio.create_task(self._collect())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._collector is not None
        self._collector.cancel()
        await asyncio.gather(self._collector, return_exceptions=True)
        await self.roster.stop()
        await self.default.stop()

    async def ask(self, chat_id: int, text: str) -> OutboundMessage:
        chat = ChatRef("telegram", str(chat_id))  # a group: each chat its own memory scope, whichever agent has it
        message = InboundMessage(chat, sender_id="42", text=text, trust=Trust.OWNER, is_direct=False)
        future: asyncio.Future[OutboundMessage] = asyncio.get_running_loop().create_future()
        self.waiters[message.id] = future
        await self.default.bus.publish_inbound(message)
        return await future

    async def _collect(self) -> None:
        while True:
            reply = await self.default.bus.consume_outbound()
            await self.default.bus.mark_sent(reply.id)
            future = self.waiters.pop(reply.in_reply_to or "", None)
            if future and not future.done():
                future.set_result(reply)


def measured(traced: bool) -> int:
    """After a collection: tracemalloc's current bytes when `traced`, else the RSS in bytes."""
    import tracemalloc

    gc.collect()
    return tracemalloc.get_traced_memory()[0] if traced else rss_kb() * 1024


async def child_memory(count: int, base_url: str, traced: bool) -> dict[str, Any]:
    """One child's figure (RSS, or the Python heap under tracemalloc) with `count` agents idle, then each used once."""
    import tracemalloc

    if traced:
        tracemalloc.start(1)
    with tempfile.TemporaryDirectory() as folder:
        config = agents_config(Path(folder), base_url, count)
        async with Agents(config) as agents:
            await agents.ask(1, "warm up")  # the default agent's chat: model, litellm and price table loaded
            idle = measured(traced)
            for i in range(1, count):
                await agents.ask(1000 + i, "hello")
            used = measured(traced)
            built = len(agents.roster.built)
    return {"idle": idle, "used": used, "built": built}


def run_child(count: int, base_url: str, traced: bool) -> dict[str, Any]:
    command = [sys.executable, str(Path(__file__)), "--child", str(count), "--base-url", base_url]
    output = subprocess.run(
        [*command, *(["--traced"] if traced else [])], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    return dict(json.loads(output.strip().splitlines()[-1]))


def memory(agents: int, base_url: str) -> None:
    mb, extra = 1024 * 1024, agents - 1
    rss = {count: run_child(count, base_url, traced=False) for count in (1, agents)}
    heap = {count: run_child(count, base_url, traced=True) for count in (1, agents)}
    print(f"Memory per agent, {load_average()} (1 agent against {agents}, each figure a fresh process):")
    for phase, label in (("idle", "idle (configured, never used)"), ("used", "once used (built, one answer)")):
        per_rss = (rss[agents][phase] - rss[1][phase]) / extra / mb
        per_heap = (heap[agents][phase] - heap[1][phase]) / extra / mb
        print(f"  {label:<32} RSS {per_rss:+7.3f} MB, Python heap {per_heap:+7.3f} MB per agent")
    print(
        f"  RSS with 1 agent {rss[1]['idle'] / mb:.1f} MB; with {agents}: idle {rss[agents]['idle'] / mb:.1f} MB, "
        f"all used {rss[agents]['used'] / mb:.1f} MB ({rss[agents]['built']} built)"
    )


async def overhead(rounds: int, base_url: str) -> None:
    with tempfile.TemporaryDirectory() as one_home, tempfile.TemporaryDirectory() as ten_home:
        one_config = agents_config(Path(one_home), base_url, 1)
        ten_config = agents_config(Path(ten_home), base_url, 10)
        async with Agents(one_config) as one, Agents(ten_config) as ten:
            chats = [1, *(1000 + i for i in range(1, 10))]
            for chat in chats:  # every agent built and warm before the clock starts
                await one.ask(chat, "warm up")
                await ten.ask(chat, "warm up")
            times: dict[str, list[float]] = {"1 agent": [], "10 agents": []}
            cpu: dict[str, float] = {"1 agent": 0.0, "10 agents": 0.0}
            for n in range(rounds):
                chat = chats[n % len(chats)]
                pair = [("1 agent", one), ("10 agents", ten)]
                for label, agents in pair if n % 2 else reversed(pair):  # each goes first in half the rounds
                    started, cpu_started = time.perf_counter(), time.process_time()
                    await agents.ask(chat, f"round {n}")
                    times[label].append(time.perf_counter() - started)
                    cpu[label] += time.process_time() - cpu_started
    print(f"Turn overhead, {rounds} rounds interleaved, {load_average()} (publish to reply, fake model at 0 s):")
    for label, samples in times.items():
        print(f"  {label:<10} {summary(samples)}; CPU {cpu[label] / rounds * 1000:.2f} ms per message")
    ratio = statistics.median(times["10 agents"]) / statistics.median(times["1 agent"])
    print(f"  10 agents ÷ 1 agent, median: {ratio:.2f}×")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", type=int, default=51)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--only", choices=["memory", "overhead"])
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    parser.add_argument("--traced", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(asyncio.run(child_memory(args.child, args.base_url, args.traced))))
        return
    with FakeProcess() as fake:
        if args.only in (None, "memory"):
            memory(args.agents, fake.base_url)
        if args.only in (None, "overhead"):
            asyncio.run(overhead(args.rounds, fake.base_url))


if __name__ == "__main__":
    main()

"""How much time relaybot adds per message, and how turns overlap across chats.

Run from the repository root:  python bench/turn_overhead.py
The fake OpenAI-compatible server runs in its own process; the agent runs in this one.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.app import AgentApp  # noqa: E402
from bot.bus import ChatRef, InboundMessage, OutboundMessage, Trust  # noqa: E402
from bot.config import Config  # noqa: E402
from bot.llm import import_litellm  # noqa: E402


class FakeServer:
    """The fake LLM in a child process, so its work does not count against the bot's."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.process: subprocess.Popen[str] | None = None
        self.base_url = ""

    def __enter__(self) -> FakeServer:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.fakes.openai_server", "--latency", str(self.latency)],
            stdout=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parents[1],
        )
        assert self.process.stdout is not None
        port = int(self.process.stdout.readline().split()[1])
        self.base_url = f"http://127.0.0.1:{port}/v1"
        return self

    def __exit__(self, *exc_info: object) -> None:
        assert self.process is not None
        self.process.terminate()
        self.process.wait(10)


class Bench:
    """An agent app on a LocalBus with a reply collector."""

    def __init__(self, base_url: str, home: Path, max_concurrent_turns: int = 8) -> None:
        self.config = Config.model_validate(
            {
                "workspace": home / "workspace",
                "state_dir": home / "state",
                "llm": {"model": "openai/fake-model", "api_key": "sk-bench", "api_base": base_url},
                "agent": {"max_concurrent_turns": max_concurrent_turns},
            }
        )
        self.app = AgentApp(self.config)
        self.waiters: dict[str, asyncio.Future[OutboundMessage]] = {}
        self._collector: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Bench:
        await self.app.start()
        self._collector = asyncio.create_task(self._collect())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._collector is not None
        self._collector.cancel()
        await self.app.stop()

    async def ask(self, chat: str, text: str) -> OutboundMessage:
        message = InboundMessage(ChatRef.parse(chat), sender_id="u", text=text, trust=Trust.OWNER)
        future: asyncio.Future[OutboundMessage] = asyncio.get_running_loop().create_future()
        self.waiters[message.id] = future
        await self.app.bus.publish_inbound(message)
        return await future

    async def _collect(self) -> None:
        while True:
            reply = await self.app.bus.consume_outbound()
            future = self.waiters.pop(reply.in_reply_to or "", None)
            if future and not future.done():
                future.set_result(reply)


def summary(samples: list[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, math.ceil(0.99 * len(ordered)) - 1)]
    return f"mean {statistics.mean(samples) * 1000:.2f} ms, p99 {p99 * 1000:.2f} ms"


async def litellm_baseline(base_url: str, system_prompt: str, tools: list[dict], count: int) -> list[float]:
    """litellm's own call time for a request of the same shape (system prompt, tools, one message)."""
    litellm = import_litellm()
    samples = []
    for i in range(count):
        started = time.perf_counter()
        await litellm.acompletion(
            model="openai/fake-model",
            api_base=base_url,
            api_key="sk-bench",
            messages=[{"role": "system", "content": system_prompt}, {"role": "user", "content": f"message {i}"}],
            tools=tools,
            max_tokens=4096,
            temperature=0.7,
            num_retries=0,
            max_retries=0,
        )
        samples.append(time.perf_counter() - started)
    return samples


async def sequential(home: Path) -> None:
    with FakeServer(0.0) as server:
        async with Bench(server.base_url, home / "seq") as bench:
            for i in range(20):
                await bench.ask(f"bench:warm{i}", "warm up")
            fresh = []
            for i in range(200):
                started = time.perf_counter()
                await bench.ask(f"bench:fresh{i}", f"message {i}")
                fresh.append(time.perf_counter() - started)
            one_chat = []
            for i in range(200):
                started = time.perf_counter()
                await bench.ask("bench:one", f"message {i}")
                one_chat.append(time.perf_counter() - started)
            from bot.agent.memory import scope_for

            probe = InboundMessage(ChatRef("bench", "x"), sender_id="u", text="", trust=Trust.OWNER)
            prompt = bench.app.context.system_prompt(probe, scope_for(bench.config.workspace, probe))
            tools = bench.app.registry.definitions(Trust.OWNER)
        baseline = await litellm_baseline(server.base_url, prompt, tools, 200)
    added = statistics.mean(fresh) - statistics.mean(baseline)
    print("1. 200 sequential messages, 0 ms model latency")
    print(f"   litellm alone, same request ({len(tools)} tools): {summary(baseline)}")
    print(f"   relaybot end to end, a new chat each: {summary(fresh)}")
    print(f"   relaybot end to end, one chat:        {summary(one_chat)}")
    print(f"   added by relaybot (new chat each):    {added * 1000:.2f} ms mean")


async def burst(home: Path, chats: int, latency: float, cap: int, label: str) -> None:
    with FakeServer(latency) as server:
        async with Bench(server.base_url, home / label, max_concurrent_turns=cap) as bench:
            await bench.ask("bench:warm", "warm up")
            started = time.perf_counter()
            await asyncio.gather(*(bench.ask(f"bench:{label}{i}", "hello") for i in range(chats)))
            elapsed = time.perf_counter() - started
    ideal = math.ceil(chats / cap) * latency
    print(f"   all {chats} answered in {elapsed:.2f} s (ideal ceil({chats}/{cap}) x {latency} s = {ideal:.2f} s)")


def cli_help_time(runs: int = 10) -> None:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "bot", "--help"], capture_output=True, check=True)
        samples.append(time.perf_counter() - started)
    print(f"4. relaybot --help: mean {statistics.mean(samples):.3f} s, best {min(samples):.3f} s over {runs} runs")


async def main() -> None:
    logging.basicConfig(level=logging.ERROR)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        await sequential(home)
        print("2. 20 chats at the same moment, 1.0 s model latency, max_concurrent_turns 20")
        await burst(home, 20, 1.0, 20, "twenty")
        print("3. 100 chats at the same moment, 0.5 s model latency, default cap 8")
        await burst(home, 100, 0.5, 8, "hundred")
    cli_help_time()


if __name__ == "__main__":
    asyncio.run(main())

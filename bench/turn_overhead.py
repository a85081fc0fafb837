"""Per-message overhead against the raw-HTTP floor, and 20 chats at once with the default config.

Run from the repository root: python bench/turn_overhead.py [--rounds 200]

The fake model runs in its own process with 0 s latency. One phase interleaves, round by round:
a raw aiohttp POST of the exact body relaybot sent in the previous round (the floor), litellm's
own `acompletion` with the same messages and tools, and a relaybot turn end to end (publish on the
bus → agent loop → model → reply on the bus) in a new chat made by `relaybot init`'s workspace.
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

from rig import Bot, FakeProcess, bench_config, summary

import bot.llm_fastpath as fastpath


class BodyTap:
    """Keeps the last wire body the fast path sent (bench-only observation)."""

    def __init__(self) -> None:
        self.body: dict[str, Any] = {}
        original = fastpath.OpenAICompatible.acompletion

        async def tapped(client: fastpath.OpenAICompatible, **request: Any) -> Any:
            self.body = fastpath.wire_body(request)
            return await original(client, **request)

        fastpath.OpenAICompatible.acompletion = tapped  # type: ignore[method-assign]


async def raw_post(session: Any, url: str, body: bytes) -> float:
    started = time.perf_counter()
    async with session.post(url, data=body, headers={"Content-Type": "application/json"}) as response:
        json.loads(await response.read())
    return time.perf_counter() - started


async def litellm_call(litellm: Any, base_url: str, body: dict[str, Any]) -> float:
    started = time.perf_counter()
    await litellm.acompletion(
        model="openai/fake-model",
        api_base=base_url,
        api_key="sk-bench",
        messages=body["messages"],
        tools=body.get("tools"),
        max_tokens=body["max_tokens"],
        temperature=body["temperature"],
        num_retries=0,
        max_retries=0,
    )
    return time.perf_counter() - started


async def interleaved(home: Path, rounds: int) -> None:
    import aiohttp

    from bot.llm import import_litellm

    tap = BodyTap()
    litellm = import_litellm()
    with FakeProcess(0.0) as fake:
        config = bench_config(home / "seq", fake.base_url)
        url = fake.base_url + "/chat/completions"
        raw: list[float] = []
        via_litellm: list[float] = []
        relaybot: list[float] = []
        sizes: list[int] = []
        async with Bot(config) as bot, aiohttp.ClientSession() as session:
            for i in range(20):
                await bot.ask(f"telegram:{1000 + i}", "warm up")
                data = json.dumps(tap.body).encode()
                await raw_post(session, url, data)
                await litellm_call(litellm, fake.base_url, tap.body)
            for i in range(rounds):
                data = json.dumps(tap.body, ensure_ascii=False, separators=(",", ":")).encode()
                sizes.append(len(data))
                raw.append(await raw_post(session, url, data))
                via_litellm.append(await litellm_call(litellm, fake.base_url, tap.body))
                started = time.perf_counter()
                await bot.ask(f"telegram:{i}", f"message {i}: what is on my list today?")
                relaybot.append(time.perf_counter() - started)
            tools = len(tap.body.get("tools") or [])
    ratio = statistics.mean(relaybot) / statistics.mean(raw)
    median_ratio = statistics.median(relaybot) / statistics.median(raw)
    print(f"1. {rounds} rounds, interleaved, 0 s model in its own process; body {statistics.mean(sizes) / 1024:.1f} KB")
    print(f"   with {tools} tools and {len(tap.body['messages'])} messages")
    print(f"   raw POST of the same body (floor): {summary(raw)}")
    print(f"   litellm.acompletion, same request: {summary(via_litellm)}")
    print(f"   relaybot end to end, new chat:     {summary(relaybot)}")
    print(f"   relaybot / floor: {ratio:.2f}x mean, {median_ratio:.2f}x median")


async def burst(home: Path, chats: int, latency: float) -> None:
    with FakeProcess(latency) as fake:
        config = bench_config(home / f"burst{chats}", fake.base_url)
        async with Bot(config) as bot:
            await bot.ask("telegram:warm", "warm up")
            started = time.perf_counter()
            await asyncio.gather(*(bot.ask(f"telegram:{i}", "hello") for i in range(chats)))
            elapsed = time.perf_counter() - started
    cap = config.agent.max_concurrent_turns
    print(f"   {chats} chats at once, {latency} s model, default cap {cap}: all answered in {elapsed:.2f} s")


async def main(rounds: int) -> None:
    logging.basicConfig(level=logging.ERROR)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        await interleaved(home, rounds)
        print("2. chats writing at the same moment, default config")
        await burst(home, 20, 1.0)
        await burst(home, 100, 1.0)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200, help="interleaved rounds")
    asyncio.run(main(parser.parse_args().rounds))

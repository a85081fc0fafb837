"""Per-message overhead against the raw-HTTP floor, and 20 chats at once with the default config.

Run from the repository root: python bench/turn_overhead.py [--rounds 200] [--only gateway] [--auto-recall off]
                                                     [--against DIR]

The fake model runs in its own process with 0 s latency. Phase 0 is the whole gateway: a real
`relaybot run` process made by `relaybot init` (default config: streaming on, Telegram only, the
owner's DM) long-polls the fake Telegram in this process; each round pushes one message and times
it to the reply's sendMessage, and reads the gateway's CPU (all threads, schedstat) around it.
Beside it, interleaved, a minimal client does the same three calls against a second fake Telegram
(long poll, the model request with relaybot's own body, sendMessage): the three-call floor.
`--against DIR` runs phase 0 once more right after, through another checkout's gateway (run by DIR/.venv, with
its own defaults) against a floor of its own, such as the code before wave 4.
One phase interleaves, round by round:
a raw aiohttp POST of the exact body relaybot sent in the previous round (the floor), litellm's
own `acompletion` with the same messages and tools, and a relaybot turn end to end (publish on the
bus → agent loop → model → reply on the bus): the owner's DM with a bot made by `relaybot init`,
its history growing and consolidated in the background as in use. litellm's call goes first and is
followed by a pause and an unmeasured request (its logging work carries on after it returns), then
the floor and the relaybot turn, each first every other round.
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

from rig import (
    HERE,
    Bot,
    Checkout,
    FakeProcess,
    RelaybotProcess,
    TimedTelegram,
    auto_recall_sections,
    bench_config,
    init_home,
    load_average,
    summary,
    write_config,
)

import bot.llm.transports.openai_http as fastpath
from bot.bus import Trust

FLOOR_TARGET = 2.0  # the gateway's push-to-reply time against the three-call floor, at most
CPU_TARGET = 3.5  # ms of the gateway's CPU per message, at most
SETTLE = 0.05  # seconds between litellm's call and the floor, so its leftover work lands on neither side


class BodyTap:
    """Keeps the last chat request body the fast path sent (bench-only observation)."""

    def __init__(self) -> None:
        self.body: dict[str, Any] = {}
        original = fastpath.OpenAICompatible.acompletion

        async def tapped(client: fastpath.OpenAICompatible, **request: Any) -> Any:
            body = fastpath.wire_body(request)
            if not any(tool["function"]["name"] == "save_memory" for tool in body.get("tools") or []):
                self.body = body  # chat turns only; consolidation runs beside them
            return await original(client, **request)

        fastpath.OpenAICompatible.acompletion = tapped  # type: ignore[method-assign]


async def raw_post(session: Any, url: str, body: bytes) -> float:
    started = time.perf_counter()
    async with session.post(url, data=body, headers={"Content-Type": "application/json"}) as response:
        json.loads(await response.read())
    return time.perf_counter() - started


async def timed_turn(bot: Bot, text: str) -> float:
    started = time.perf_counter()
    await bot.ask("telegram:42", text)
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


async def three_calls(session: Any, telegram: TimedTelegram, model_url: str, body: bytes) -> None:
    """The floor: long-poll updates, ask the model with relaybot's body, send the answer; forever."""
    api = f"{telegram.base_url}{telegram.token}"
    offset = 0
    while True:
        async with session.post(f"{api}/getUpdates", json={"offset": offset, "timeout": 30}) as response:
            updates = (await response.json())["result"]
        for update in updates:
            offset = update["update_id"] + 1
            message = update["message"]
            async with session.post(model_url, data=body, headers={"Content-Type": "application/json"}) as response:
                json.loads(await response.read())
            reply = {"chat_id": message["chat"]["id"], "text": f"echo: {message['text']}"}
            async with session.post(f"{api}/sendMessage", json=reply) as response:
                await response.read()


async def gateway_round(telegram: TimedTelegram, n: int, gateway: RelaybotProcess | None = None) -> tuple[float, float]:
    """Push message `n` as the owner's DM; the time to its reply and the CPU the gateway spent meanwhile."""
    cpu = gateway.cpu if gateway else 0.0
    started = time.perf_counter()
    telegram.text(f"q{n}q what is on my list today?", chat_id=42, user_id=42)
    arrived = await telegram.reply_to(n)
    if gateway:
        await asyncio.sleep(0.002)  # the reply's last bookkeeping (journal, drafts) lands in this round's CPU
        cpu = gateway.cpu - cpu
    return arrived - started, cpu


async def whole_gateway(
    home: Path, rounds: int, body: dict[str, Any], auto_recall: bool | None, code: Checkout = HERE
) -> None:
    """Phase 0: `relaybot run` of `code` (default config, streaming on; `auto_recall` None: its default) against the
    floor of three calls, interleaved."""
    import aiohttp

    with FakeProcess(0.0, consolidating=True) as fake:
        async with TimedTelegram() as telegram, TimedTelegram() as bare, aiohttp.ClientSession() as session:
            gateway_home = home / ("gateway" if code is HERE else "against")
            config_file = init_home(gateway_home, code)
            section = {"enabled": True, "token": telegram.token, "api_base": telegram.base_url}
            sections = auto_recall_sections(auto_recall)
            owners = ["telegram:42"]
            write_config(config_file, fake.base_url, owners=owners, channels={"telegram": section}, **sections)
            gateway = RelaybotProcess(gateway_home, config_file, code=code)
            data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
            client = asyncio.create_task(three_calls(session, bare, fake.base_url + "/chat/completions", data))
            try:
                await telegram.wait_for_call("getUpdates", 1, timeout=120)
                for n in range(20):
                    await gateway_round(telegram, n)
                    await gateway_round(bare, n)
                times: list[float] = []
                floor: list[float] = []
                cpu: list[float] = []
                for n in range(20, 20 + rounds):
                    if n % 2:
                        floor.append((await gateway_round(bare, n))[0])
                    took, spent = await gateway_round(telegram, n, gateway)
                    times.append(took)
                    cpu.append(spent)
                    if not n % 2:
                        floor.append((await gateway_round(bare, n))[0])
            finally:
                client.cancel()
                gateway.stop()
    recall = "its default" if auto_recall is None else "on" if auto_recall else "off"
    of = "" if code is HERE else f" of {code.root}"
    print(f"0. {rounds} owner DMs through `relaybot run`{of} (auto-recall {recall}), 0 s model ({load_average()})")
    print(f"   three-call floor (poll, model, send): {summary(floor)}")
    print(f"   relaybot, push to reply:             {summary(times)}")
    mean, median = statistics.mean(times) / statistics.mean(floor), statistics.median(times) / statistics.median(floor)
    print(f"   relaybot / floor: {mean:.2f}x mean, {median:.2f}x median   {_target(mean, FLOOR_TARGET, 'x')}")
    print(f"   gateway CPU per message: {summary(cpu)}   {_target(statistics.mean(cpu) * 1000, CPU_TARGET, ' ms')}")


def _target(mean: float, target: float, unit: str) -> str:
    """The target beside a mean figure, and whether the mean meets it (issue 50's targets)."""
    return f"target <= {target:g}{unit} (mean) {'met' if mean <= target else 'MISSED'}"


async def interleaved(home: Path, rounds: int) -> dict[str, Any]:
    import aiohttp

    from bot.llm.transports.litellm_loader import import_litellm

    tap = BodyTap()
    litellm = import_litellm()
    with FakeProcess(0.0, consolidating=True) as fake:
        config = bench_config(home / "seq", fake.base_url)
        url = fake.base_url + "/chat/completions"
        raw: list[float] = []
        via_litellm: list[float] = []
        relaybot: list[float] = []
        sizes: list[int] = []
        async with Bot(config) as bot, aiohttp.ClientSession() as session:
            for i in range(20):
                await bot.ask("telegram:42", f"warm up {i}")
                data = json.dumps(tap.body).encode()
                await raw_post(session, url, data)
                await litellm_call(litellm, fake.base_url, tap.body)
            for i in range(rounds):
                data = json.dumps(tap.body, ensure_ascii=False, separators=(",", ":")).encode()
                sizes.append(len(data))
                via_litellm.append(await litellm_call(litellm, fake.base_url, tap.body))
                await asyncio.sleep(SETTLE)  # litellm's logging and cost work runs on after its call returns
                await raw_post(session, url, data)  # unmeasured: the first request after a pause is slower
                if i % 2:  # and each side goes first every other round
                    raw.append(await raw_post(session, url, data))
                relaybot.append(await timed_turn(bot, f"message {i}: what is on my list today?"))
                if not i % 2:
                    raw.append(await raw_post(session, url, data))
            tools = len(tap.body.get("tools") or [])
    ratio = statistics.mean(relaybot) / statistics.mean(raw)
    median_ratio = statistics.median(relaybot) / statistics.median(raw)
    print(f"1. {rounds} rounds, interleaved, 0 s model in its own process; the owner's DM, {tools} tools;")
    low, high, mean = min(sizes) / 1024, max(sizes) / 1024, statistics.mean(sizes) / 1024
    print(f"   request body {low:.1f}–{high:.1f} KB, mean {mean:.1f} KB")
    print(f"   raw POST of the same body (floor): {summary(raw)}")
    print(f"   litellm.acompletion, same request: {summary(via_litellm)}")
    print(f"   relaybot end to end, owner's DM:   {summary(relaybot)}")
    print(f"   relaybot / floor: {ratio:.2f}x mean, {median_ratio:.2f}x median ({load_average()})")
    return tap.body


async def burst(home: Path, chats: int, latency: float, cap: int | None) -> float:
    """Seconds until `chats` people writing at once in their DMs are all answered; `cap` None keeps the default."""
    agent = {} if cap is None else {"max_concurrent_turns": cap}
    with FakeProcess(latency) as fake:
        config = bench_config(home / f"burst{chats}-{cap}", fake.base_url, agent=agent)
        async with Bot(config) as bot:
            await bot.ask("telegram:warm", "warm up")
            started = time.perf_counter()
            await asyncio.gather(*(bot.ask(f"telegram:{i}", "hello", str(i), Trust.GUEST) for i in range(chats)))
            return time.perf_counter() - started


async def concurrency(home: Path) -> None:
    default = bench_config(home / "defaults", "http://127.0.0.1:9/v1").agent.max_concurrent_turns
    print(f"2. chats writing at the same moment to a model that takes 1 s (default max_concurrent_turns {default})")
    print(f"   20 chats, default config: all answered in {await burst(home, 20, 1.0, None):.2f} s")
    for cap in (8, 16, 32, 64, 128):
        twenty = await burst(home, 20, 1.0, cap)
        hundred = await burst(home, 100, 1.0, cap)
        print(f"   max_concurrent_turns {cap:>3}: 20 chats in {twenty:.2f} s, 100 chats in {hundred:.2f} s")


def add_skills(workspace: Path, count: int) -> None:
    for i in range(count):
        folder = workspace / "skills" / f"skill-{i:03}"
        folder.mkdir(parents=True, exist_ok=True)
        meta = f"name: skill-{i:03}\ndescription: Handles task family {i}.\nrequires: {{bins: [tool{i}]}}"
        (folder / "SKILL.md").write_text(f"---\n{meta}\n---\nStep by step instructions for family {i}.\n")


async def skills_cost(home: Path, rounds: int) -> None:
    """Turns and system-prompt builds with 0 and 100 workspace skills, interleaved."""
    from bot.bus import ChatRef, InboundMessage
    from bot.memory.files import scope_for

    with FakeProcess(0.0, consolidating=True) as fake:
        bots = {}
        for count in (0, 100):
            config = bench_config(home / f"skills{count}", fake.base_url)
            add_skills(config.workspace, count)
            bots[count] = Bot(config)
        turns: dict[int, list[float]] = {0: [], 100: []}
        builds: dict[int, list[float]] = {0: [], 100: []}
        probe = InboundMessage(ChatRef("telegram", "42"), sender_id="42", text="", trust=Trust.OWNER)
        async with bots[0], bots[100]:
            for bot in bots.values():
                reply = await bot.ask("telegram:42", "warm up")
                assert reply.text.startswith("echo: "), reply.text
            for i in range(rounds):
                for count, bot in bots.items():
                    started = time.perf_counter()
                    await bot.ask("telegram:42", f"message {i}")
                    turns[count].append(time.perf_counter() - started)
                    context, scope = bot.app.context, scope_for(bot.config.workspace, probe)
                    started = time.perf_counter()
                    context.system_prompt(probe, scope)
                    builds[count].append(time.perf_counter() - started)
    print(f"3. workspace skills, {rounds} interleaved rounds (owner's DM; 6 built-in skills in both)")
    for count in (0, 100):
        build = statistics.median(builds[count]) * 1e6
        print(f"   {count:>3} extra skills: system prompt {build:6.1f} µs median, turn {summary(turns[count])}")


async def main(rounds: int, only: str | None, auto_recall: bool, against: Checkout | None) -> None:
    logging.basicConfig(level=logging.ERROR)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        body = await interleaved(home, 20 if only == "gateway" else rounds)
        await whole_gateway(home, rounds, body, auto_recall)
        if against is not None:
            await whole_gateway(home, rounds, body, None, against)
        if only != "gateway":
            await concurrency(home)
            await skills_cost(home, rounds)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200, help="interleaved rounds")
    parser.add_argument("--only", choices=["gateway"], help="only the whole-gateway phase (after a short warm-up)")
    recall_help = "memory.auto_recall.enabled in phase 0"
    parser.add_argument("--auto-recall", choices=["on", "off"], default="on", help=recall_help)
    parser.add_argument("--against", type=Path, help="another checkout (with its .venv): phase 0 through it too")
    arguments = parser.parse_args()
    against = Checkout.at(arguments.against) if arguments.against else None
    asyncio.run(main(arguments.rounds, arguments.only, arguments.auto_recall == "on", against))

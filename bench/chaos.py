"""Delivery under chaos: 1,000 messages over 50 chats through the real gateway, with and without faults.

Run from the repository root:  python bench/chaos.py [--messages 1000] [--chats 50] [--rate 0.1] [--rounds 1] [--trace]
Faults: `rate` of sendMessage calls fail (429 with retry_after 1, 502, a connection dropped before or after
Telegram took the message) and `rate` of updates are delivered twice. Prints lost, doubled and ambiguous
counts and the wall time of each run (the last reply's arrival); with faults it should stay within 1.4x of
the clean run of the same round, in every round. `--rounds N` alternates clean and faulty runs N times, so a
changing machine load touches both alike; `--together` runs each round's two at the same time, each in its own
process with its own fake LLM, so a load that changes between runs cannot make one look slower than the other
(the faulty run, the longer, has the machine a little more to itself once the clean one is done).
`--trace` shows where each run's last replies waited (bench/chaos_trace.py). Otherwise the fake LLM runs in its
own process, and the fake Telegram and the gateway share this one.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.chaos_trace import SendTrace  # noqa: E402
from bot.app.gateway import Gateway  # noqa: E402
from bot.config.schema import Config  # noqa: E402
from bot.events import Delivered, Event, TurnFinished  # noqa: E402
from bot.llm.provider import ModelProvider  # noqa: E402
from bot.retry import RetryPolicy  # noqa: E402
from tests.fakes.openai_server import FakeLLM, echo  # noqa: E402
from tests.fakes.telegram_server import FakeTelegram  # noqa: E402


@dataclass(frozen=True)
class Outcome:
    """What one run delivered, and how long it took."""

    wall: float
    lost: int
    doubled: int
    ambiguous: int
    faults: int
    tail: float  # the last reply's arrival after the last turn ended
    slowest: float  # the longest a reply took from its turn's end to Telegram
    cpu: float  # this process's CPU time (the gateway and the fake Telegram) from the first update to the last reply
    trace: SendTrace | None = None


async def run(base_url: str, messages: int, chats: int, rate: float, trace: SendTrace | None = None) -> Outcome:
    """Push `messages` round-robin over `chats` and wait until each has its reply; `trace` notes each send's steps."""
    async with FakeTelegram() as telegram:
        if rate:
            telegram.chaos(rate, seed=1)
        with tempfile.TemporaryDirectory() as home:
            config = Config.model_validate(
                {
                    "workspace": Path(home) / "workspace",
                    "state_dir": Path(home) / "state",
                    "heartbeat": {"enabled": False},
                    "llm": {"model": "openai/fake-model", "api_key": "sk-x", "api_base": base_url},
                    "agent": {"queue_mode": "followup"},
                    "access": {"rate_limit": 0},
                    "budgets": {"guest": None},  # strangers under dm_policy open are guests
                    "channels": {
                        "telegram": {
                            "enabled": True,
                            "token": telegram.token,
                            "api_base": telegram.base_url,
                            "dm_policy": "open",
                        }
                    },
                }
            )
            gateway = Gateway(config, ModelProvider(config.llm, RetryPolicy(base_delay=0.0)))
            ended: dict[str, float] = {}
            delivered: dict[str, float] = {}

            def note(event: Event) -> None:
                if isinstance(event, TurnFinished):
                    ended[event.turn_id] = time.perf_counter()
                    if trace is not None:
                        trace.note_turn_ended(event.turn_id)
                elif isinstance(event, Delivered) and event.in_reply_to:
                    delivered.setdefault(event.in_reply_to, time.perf_counter())

            gateway.agent.events.subscribe(note, TurnFinished, Delivered)
            await gateway.start()
            await gateway.manager.ready("telegram")
            rng = random.Random(2)
            started, cpu = time.perf_counter(), time.process_time()
            if trace is not None:
                trace.started = started
            tokens = [f"k{chat}x{n}" for n in range(messages // chats) for chat in range(1000, 1000 + chats)]
            for token in tokens:
                chat = int(token[1:5])
                update = telegram.text(token, chat_id=chat, user_id=chat)
                if rate and rng.random() < rate:
                    telegram.push({"message": update["message"]})
            await telegram.wait_for_sent(len(tokens), timeout=900)
            with contextlib.suppress(TimeoutError):  # what is still missing a minute on is counted lost
                await telegram.wait_until(every_token_answered(telegram, tokens), "every message answered", 60)
            await gateway.manager.flush(60)
            wall, cpu = time.perf_counter() - started, time.process_time() - cpu
            stats = await gateway.agent.bus.stats()
            await gateway.stop()
    counts = Counter(s["text"].split()[-1] for s in telegram.sent)
    lost = sum(1 for token in tokens if token not in counts)
    doubled = sum(n - 1 for n in counts.values())
    tail = max(delivered.values()) - max(ended.values())
    slowest = max(at - ended[turn] for turn, at in delivered.items() if turn in ended)
    faults = sum(telegram.faults.values())
    return Outcome(wall, lost, doubled, stats.ambiguous_sends, faults, tail, slowest, cpu, trace)


def every_token_answered(telegram: FakeTelegram, tokens: list[str]) -> Callable[[], bool]:
    """A check that each token has a reply: counting sends alone, the doubles would end the wait early."""
    wanted, seen, read = set(tokens), set(), 0

    def check() -> bool:
        nonlocal read
        for sent in telegram.sent[read:]:
            if (token := sent["text"].split()[-1]) in wanted:
                seen.add(token)
        read = len(telegram.sent)
        return len(seen) == len(wanted)

    return check


async def traced_run(base_url: str, messages: int, chats: int, rate: float, tracing: bool) -> Outcome:
    """`run`, with the outbox's steps noted when `tracing`."""
    if not tracing:
        return await run(base_url, messages, chats, rate)
    trace = SendTrace()
    with trace.installed():
        return await run(base_url, messages, chats, rate, trace)


async def one_run(messages: int, chats: int, rate: float) -> None:
    """One run with its own fake LLM, its outcome printed as one JSON line (a child of `--together`)."""
    async with FakeLLM(default=echo) as llm:
        outcome = await run(llm.base_url, messages, chats, rate)
    print(json.dumps({name: value for name, value in asdict(outcome).items() if name != "trace"}), flush=True)


async def together(messages: int, chats: int, rate: float) -> tuple[Outcome, Outcome]:
    """A clean and a faulty run at the same time, each in its own process: the machine's load touches both alike."""

    async def child(child_rate: float) -> Outcome:
        argv = [__file__, "--messages", str(messages), "--chats", str(chats), "--one-run", str(child_rate)]
        process = await asyncio.create_subprocess_exec(sys.executable, *argv, stdout=asyncio.subprocess.PIPE)
        out, _ = await process.communicate()
        return Outcome(**json.loads(out.decode().strip().splitlines()[-1]))

    clean, chaos = await asyncio.gather(child(0.0), child(rate))
    return clean, chaos


def show(name: str, outcome: Outcome) -> None:
    """Print one run's figures (and its trace, if it has one)."""
    print(
        f"  {name:<11} wall {outcome.wall:6.1f}s  CPU {outcome.cpu:5.1f}s  lost {outcome.lost}  "
        f"doubled {outcome.doubled}  ambiguous sends {outcome.ambiguous}  faults injected {outcome.faults}  "
        f"last reply {outcome.tail:.2f}s after the last turn  slowest reply {outcome.slowest:.2f}s"
    )
    if outcome.trace is not None:
        print("\n".join(outcome.trace.report()))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--chats", type=int, default=50)
    parser.add_argument("--rate", type=float, default=0.1)
    parser.add_argument("--rounds", type=int, default=1, help="clean and faulty runs, alternated")
    parser.add_argument("--trace", action="store_true", help="show where the last replies of each run waited")
    parser.add_argument("--together", action="store_true", help="run each round's clean and faulty runs at once")
    parser.add_argument("--one-run", type=float, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    logging.getLogger("telegram").setLevel(logging.CRITICAL)  # the injected 502 pages, logged by PTB
    if args.one_run is not None:
        return await one_run(args.messages, args.chats, args.one_run)
    print(f"{args.messages} messages over {args.chats} chats" + (", clean and faulty at once" if args.together else ""))
    ratios = []
    async with contextlib.AsyncExitStack() as stack:
        llm = None if args.together else await stack.enter_async_context(FakeLLM(default=echo))
        for round_ in range(1, args.rounds + 1):
            if llm is None:
                clean, chaos = await together(args.messages, args.chats, args.rate)
            else:
                clean = await traced_run(llm.base_url, args.messages, args.chats, 0.0, args.trace)
                chaos = await traced_run(llm.base_url, args.messages, args.chats, args.rate, args.trace)
            ratios.append(chaos.wall / clean.wall)
            print(f"round {round_} (load average {os.getloadavg()[0]:.1f})")
            show("no faults", clean)
            show(f"{args.rate:.0%} faults", chaos)
            print(f"  wall time ratio {ratios[-1]:.2f}x", flush=True)
    print(f"ratios {' '.join(f'{r:.2f}x' for r in ratios)}; target: each <= 1.4x (the clean run is its baseline)")


if __name__ == "__main__":
    asyncio.run(main())

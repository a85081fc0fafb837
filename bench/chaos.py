"""Delivery under chaos: 1,000 messages over 50 chats through the real gateway, with and without faults.

Run from the repository root:  python bench/chaos.py [--messages 1000] [--chats 50] [--rate 0.1]
Faults: `rate` of sendMessage calls fail (429 with retry_after 1, 502, a connection dropped before or after
Telegram took the message) and `rate` of updates are delivered twice. Prints lost, doubled and ambiguous
counts and the wall time of each run; with faults it should stay within 2x of the clean run.
The fake LLM runs in its own process; the fake Telegram and the gateway share this one.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import random
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.app.gateway import Gateway  # noqa: E402
from bot.config.schema import Config  # noqa: E402
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


async def run(base_url: str, messages: int, chats: int, rate: float) -> Outcome:
    """Push `messages` round-robin over `chats` and wait until each has its reply."""
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
            await gateway.start()
            await gateway.manager.ready("telegram")
            rng = random.Random(2)
            started = time.perf_counter()
            tokens = [f"k{chat}x{n}" for n in range(messages // chats) for chat in range(1000, 1000 + chats)]
            for token in tokens:
                chat = int(token[1:5])
                update = telegram.text(token, chat_id=chat, user_id=chat)
                if rate and rng.random() < rate:
                    telegram.push({"message": update["message"]})
            await telegram.wait_for_sent(len(tokens), timeout=900)
            await gateway.manager.flush(60)
            wall = time.perf_counter() - started
            stats = await gateway.agent.bus.stats()
            await gateway.stop()
    counts = Counter(s["text"].split()[-1] for s in telegram.sent)
    lost = sum(1 for token in tokens if token not in counts)
    doubled = sum(n - 1 for n in counts.values())
    return Outcome(wall, lost, doubled, stats.ambiguous_sends, sum(telegram.faults.values()))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--chats", type=int, default=50)
    parser.add_argument("--rate", type=float, default=0.1)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    logging.getLogger("telegram").setLevel(logging.CRITICAL)  # the injected 502 pages, logged by PTB
    async with FakeLLM(default=echo) as llm:
        clean = await run(llm.base_url, args.messages, args.chats, 0.0)
        chaos = await run(llm.base_url, args.messages, args.chats, args.rate)
    print(f"{args.messages} messages over {args.chats} chats")
    for name, outcome in (("no faults", clean), (f"{args.rate:.0%} faults", chaos)):
        print(
            f"  {name:<11} wall {outcome.wall:6.1f}s  lost {outcome.lost}  doubled {outcome.doubled}  "
            f"ambiguous sends {outcome.ambiguous}  faults injected {outcome.faults}"
        )
    print(f"  wall time ratio {chaos.wall / clean.wall:.2f}x (must stay within 2x)")


if __name__ == "__main__":
    asyncio.run(main())

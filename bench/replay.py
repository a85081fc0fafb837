"""A long conversation replayed: the development conversations played as ten chats at once through a real gateway.

Run from the repository root: python bench/replay.py [--locomo ../shared/data/locomo-dev] [--rounds 2]
                              [--exchanges N] [--against DIR]

A real `relaybot run` made by `relaybot init` (Telegram only, the ten people allowlisted, replies sent whole, no flood
limit) long-polls the fake Telegram served by this process; the fake model (0 s, answering consolidation with
save_memory) runs in a process of its own. Ten people each replay one LoCoMo conversation in their DM (chat `i`
plays conversation `i mod count`), every message sent once the reply to the last one arrived, all ten at once.
The figure is exchanges answered per second of wall time, with the memory index kept as it is by default
(auto-recall on, every message indexed). The baseline, in the same run and alternated with it, is the same replay
with auto-recall off (`memory.auto_recall.enabled: false`; messages still indexed, in the background). Beside the
gateway's CPU an exchange it prints the fakes' (this process's Telegram and the model's process): on a small machine
they share its cores with the gateway. `--against DIR` adds, in each round, the same replay through another checkout's
gateway (run by DIR/.venv, with that code's own memory defaults), such as the code before wave 4.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import tempfile
import time
from pathlib import Path

from locomo.conversation import Conversation, load
from rig import (
    HERE,
    Checkout,
    FakeProcess,
    RelaybotProcess,
    TimedTelegram,
    auto_recall_sections,
    init_home,
    load_average,
    process_cpu,
    write_config,
)

CHATS = 10
TARGET = 300.0  # exchanges a second, issue 50
FIRST_USER = 500_000


async def replay(
    home: Path,
    fake: FakeProcess,
    conversations: list[Conversation],
    exchanges: int | None,
    auto_recall: bool | None,
    code: Checkout = HERE,
) -> tuple[float, float, float, int]:
    """Ten chats replaying the conversations at once through a fresh gateway of `code` (`auto_recall` None: its
    default): (exchanges/s, gateway CPU ms per exchange, the fakes' CPU ms per exchange (Telegram in this process,
    the model in its own), exchanges answered)."""
    assert fake.process is not None
    base_url = fake.base_url
    counter = itertools.count(1)
    async with TimedTelegram() as telegram:
        config_file = init_home(home, code)
        section = {
            "enabled": True,
            "token": telegram.token,
            "api_base": telegram.base_url,
            "dm_policy": "allowlist",
            "allow_from": [str(FIRST_USER + i) for i in range(CHATS)],
            "streaming": "off",
        }
        sections = auto_recall_sections(auto_recall)
        write_config(config_file, base_url, channels={"telegram": section}, access={"rate_limit": 0}, **sections)
        gateway = RelaybotProcess(home, config_file, code=code)
        try:
            await telegram.wait_for_call("getUpdates", 1, timeout=120)

            async def chat(user: int, conversation: Conversation) -> int:
                said = 0
                for exchange in conversation.exchanges[:exchanges]:
                    n = next(counter)
                    telegram.text(f"q{n}q {exchange.asked}", chat_id=user, user_id=user, first_name=f"P{user}")
                    await telegram.reply_to(n, timeout=120)
                    said += 1
                return said

            cpu = gateway.cpu
            fakes = time.process_time() + process_cpu(fake.process.pid)
            started = time.perf_counter()
            said = await asyncio.gather(
                *(chat(FIRST_USER + i, conversations[i % len(conversations)]) for i in range(CHATS))
            )
            wall = time.perf_counter() - started
            cpu = gateway.cpu - cpu
            fakes = time.process_time() + process_cpu(fake.process.pid) - fakes
        finally:
            gateway.stop()
    total = sum(said)
    return total / wall, cpu * 1000 / total, fakes * 1000 / total, total


async def main(folder: Path, rounds: int, exchanges: int | None, against: Checkout | None) -> None:
    conversations = load(folder)
    replays: list[tuple[str, bool | None, Checkout]] = [
        ("index kept, auto-recall on ", True, HERE),
        ("baseline, auto-recall off", False, HERE),
    ]
    if against is not None:
        replays.append((f"against {against.root}", None, against))
    rates: dict[str, list[float]] = {name: [] for name, _, _ in replays}
    with tempfile.TemporaryDirectory() as tmp, FakeProcess(0.0, consolidating=True) as fake:
        for run in range(rounds):
            for number, (name, auto_recall, code) in enumerate(replays):
                home = Path(tmp) / f"{run}-{number}"
                rate, cpu, fakes, total = await replay(home, fake, conversations, exchanges, auto_recall, code)
                rates[name].append(rate)
                print(
                    f"round {run + 1}, {name}: {total:,} exchanges in {CHATS} chats, {rate:.0f} exchanges/s,"
                    f" gateway CPU {cpu:.2f} ms an exchange, the fakes' {fakes:.2f} ms ({load_average()})",
                    flush=True,
                )
    kept, baseline = (statistics.median(rates[name]) for name, _, _ in replays[:2])
    print(
        f"replay, ten chats at once, 0 s model: {kept:.0f} exchanges/s with the index kept (target ≥ {TARGET:.0f};"
        f" 107 at issue 50's start), baseline with auto-recall off {baseline:.0f}/s, median of {rounds}"
        f" ({load_average()})"
    )
    if against is not None:
        print(f"against {against.root} (its own defaults): {statistics.median(rates[replays[2][0]]):.0f}/s, median")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", type=Path, default=Path("../shared/data/locomo-dev"), help="LoCoMo folder")
    parser.add_argument("--rounds", type=int, default=2, help="rounds; each plays every replay once")
    parser.add_argument("--exchanges", type=int, help="the first N exchanges of each conversation (all by default)")
    parser.add_argument("--against", type=Path, help="another checkout (with its .venv) replayed in each round too")
    args = parser.parse_args()
    asyncio.run(main(args.locomo, args.rounds, args.exchanges, Checkout.at(args.against) if args.against else None))

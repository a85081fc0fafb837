"""Memory that stays bounded: RSS after many one-turn chats, and what opening a 100,000-message chat blocks.

Run from the repository root: python bench/memory.py [--chats 3000] [--baseline 300] [--sessions-only]
                             [--growth 1000] [--gateway 300,3000,6000] [--gateway-only]
                             [--gateway-growth 1000]

Part 0 is the issue's own measurement: a real `relaybot run` made by `relaybot init` (Telegram only,
`dm_policy: open`, the fake model in a process of its own) long-polls the fake Telegram in this
process; one-message DMs from different people, 20 at a time, each answered by a sendMessage, and the
gateway's RSS read (two seconds after the last reply, once the turns went quiet) at each count of `--gateway`.
A second gateway, the baseline, runs the same at the same time with `MALLOC_ARENA_MAX` set to glibc's own
default, which makes relaybot leave the allocator as glibc sets it (no arena limit, no trim).
`--gateway-growth N` runs the same gateway in this process under tracemalloc, N and 2N chats apart, and prints
what it kept between them by line (the fake Telegram's and the bench's own allocations left out).
Each count of chats runs in a fresh child process: a bot from `relaybot init`'s workspace, the
fake model (0 s) in a process of its own, one turn per chat (a different guest's DM each),
20 chats at a time. The child prints
its RSS idle (after one warm-up turn) and after the chats (after a garbage collection), and how
many sessions its cache holds. Then a 100,000-message session is written turn by turn in the
store's own format, and opening it is timed: the tail read the agent does, beside a whole-file read.
Last, the same session is turned into the old file format (no message numbers) and opened as a turn
does, with the event loop's longest stall timed meanwhile. `--growth N` instead takes tracemalloc
snapshots after N and after 2N more one-turn chats (the session cache held to 50, so it is full
early) and prints where the memory kept between them was allocated, by line: what still grows per chat.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rig import (
    ROOT,
    Bot,
    FakeProcess,
    RelaybotProcess,
    TimedTelegram,
    bench_config,
    init_home,
    load_average,
    write_config,
)

from bot.bus import Trust
from bot.llm.prices import price_table

QUIET_READ = 2.0  # seconds after a count's last reply before RSS is read
TARGETS = {3000: 1.0, 6000: 0.8}  # MB more than the count before, issue 50


def rss_kb() -> int:
    """This process's resident set size in KB (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def child(chats: int, home: Path) -> None:
    """Run `chats` one-turn chats; print a JSON line of RSS figures."""
    with FakeProcess(0.0) as fake:
        config = bench_config(home, fake.base_url)
        async with Bot(config) as bot:
            await bot.ask("telegram:warm", "warm up")
            await asyncio.to_thread(price_table)  # the provider's warm-up loads it; have it done before measuring
            gc.collect()
            idle = rss_kb()
            for start in range(0, chats, 20):
                await asyncio.gather(
                    *(
                        bot.ask(f"telegram:{i}", f"hello from chat {i}", str(i), Trust.GUEST)
                        for i in range(start, min(chats, start + 20))
                    )
                )
            gc.collect()
            after = rss_kb()
            cached = bot.app.sessions.cached
    print(json.dumps({"chats": chats, "idle_kb": idle, "after_kb": after, "cached": cached}))


async def growth(chats: int, home: Path) -> None:
    """Print the lines whose allocations, still alive, grew between `chats` and `2 * chats` more one-turn chats."""
    import tracemalloc

    async def run(bot: Bot, first: int, count: int) -> None:
        for start in range(first, first + count, 20):
            chunk = range(start, min(first + count, start + 20))
            await asyncio.gather(*(bot.ask(f"telegram:{i}", f"hi {i}", str(i), Trust.GUEST) for i in chunk))

    with FakeProcess(0.0) as fake:
        config = bench_config(home, fake.base_url, agent={"session_cache_size": 50})
        async with Bot(config) as bot:
            await run(bot, 0, 100)
            tracemalloc.start(4)
            await run(bot, 100, chats)
            gc.collect()
            first = tracemalloc.take_snapshot()
            await run(bot, 100 + chats, chats)
            gc.collect()
            second = tracemalloc.take_snapshot()
    print_growth(first, second, chats)


def process_rss_kb(pid: int) -> int:
    """Another process's resident set size in KB (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def dm_chats(telegram: TimedTelegram, first: int, count: int) -> None:
    """`count` one-message DMs from different people, 20 at a time, each batch answered before the next."""
    for start in range(first, first + count, 20):
        chunk = range(start, min(first + count, start + 20))
        for n in chunk:
            telegram.text(f"q{n}q hello", chat_id=100_000 + n, user_id=100_000 + n, first_name=f"P{n}", username=None)
        await asyncio.gather(*(telegram.reply_to(n) for n in chunk))
    telegram.sent.clear()  # the fake's own records are not the gateway's memory
    telegram.calls.clear()
    telegram.arrived.clear()


def gateway_home(home: Path, telegram: TimedTelegram, base_url: str, **agent: Any) -> Path:
    config_file = init_home(home)
    section = {"enabled": True, "token": telegram.token, "api_base": telegram.base_url, "dm_policy": "open"}
    write_config(config_file, base_url, owners=["telegram:42"], channels={"telegram": section}, agent=agent)
    return config_file


GLIBC_DEFAULT = {"MALLOC_ARENA_MAX": str(8 * (os.cpu_count() or 1))}  # glibc's own limit; relaybot then leaves it be


async def gateway_figures(home: Path, counts: list[int], base_url: str, env: dict[str, str]) -> list[tuple[int, int]]:
    """The RSS of a real `relaybot run` (KB) after 20 one-message DMs and after each count of them."""
    figures: list[tuple[int, int]] = []
    async with TimedTelegram() as telegram:
        config_file = gateway_home(home, telegram, base_url)
        gateway = RelaybotProcess(home, config_file, env=env)
        try:
            await telegram.wait_for_call("getUpdates", 1, timeout=120)
            await dm_chats(telegram, 0, 20)
            await asyncio.sleep(QUIET_READ)
            figures.append((20, process_rss_kb(gateway.process.pid)))
            done = 0
            for count in counts:
                await dm_chats(telegram, 20 + done, count - done)
                done = count
                await asyncio.sleep(QUIET_READ)  # the last replies' bookkeeping, and the trim once turns go quiet
                figures.append((count, process_rss_kb(gateway.process.pid)))
        finally:
            gateway.stop()
    return figures


async def gateway_rss(home: Path, counts: list[int]) -> None:
    """Part 0: the RSS of a real `relaybot run` after each count of one-message DMs through the fake Telegram, beside
    the same gateway with glibc's own allocator settings (MALLOC_ARENA_MAX set: no arena limit, no trim) at once."""
    with FakeProcess(0.0) as fake:
        tuned, baseline = await asyncio.gather(
            gateway_figures(home / "tuned", counts, fake.base_url, {}),
            gateway_figures(home / "baseline", counts, fake.base_url, GLIBC_DEFAULT),
        )
    print(f"0. gateway RSS, one-message DMs through `relaybot run` and the fake Telegram ({load_average()}):")
    print("   chats    relaybot's allocator settings    baseline: glibc's own (MALLOC_ARENA_MAX set)")
    for i, ((count, rss), (_, base)) in enumerate(zip(tuned, baseline, strict=True)):
        grew = f"({(rss - tuned[i - 1][1]) / 1024:+.1f} MB)" if i else ""
        base_grew = f"({(base - baseline[i - 1][1]) / 1024:+.1f} MB)" if i else ""
        print(f"   {count:>6,}   {rss / 1024:6.1f} MB {grew:12}           {base / 1024:6.1f} MB {base_grew}")
    growth = {count: (rss - tuned[i][1]) / 1024 for i, (count, rss) in enumerate(tuned[1:])}
    for count, target in TARGETS.items():
        if count in growth:
            print(f"   to {count:,} chats: {growth[count]:+.1f} MB (target ≤ +{target} MB)")


async def gateway_growth(chats: int, home: Path) -> None:
    """What the whole gateway (in this process) kept between `chats` and `2 * chats` more one-message DMs."""
    import tracemalloc

    from bot.app.gateway import Gateway
    from bot.config.loader import load_config

    with FakeProcess(0.0) as fake:
        async with TimedTelegram() as telegram:
            config = load_config(gateway_home(home, telegram, fake.base_url, session_cache_size=50))
            gateway = Gateway(config)
            await gateway.start()
            try:
                await dm_chats(telegram, 0, 200)
                sqlite_kb()  # ctypes loaded before the snapshots
                tracemalloc.start(8)  # deep enough to see the fake server's frames under yarl's and aiohttp's
                await dm_chats(telegram, 200, chats)
                gc.collect()
                first, rss, sqlite = tracemalloc.take_snapshot(), rss_kb(), sqlite_kb()
                await dm_chats(telegram, 200 + chats, chats)
                gc.collect()
                second, rss, sqlite = tracemalloc.take_snapshot(), rss_kb() - rss, sqlite_kb() - sqlite
            finally:
                await gateway.stop()
    print(f"RSS {rss / 1024:+.1f} MB (with the fake's and tracemalloc's own), SQLite's {sqlite / 1024:+.2f} MB")
    print_growth(first, second, chats)


def sqlite_kb() -> int:
    """What SQLite has allocated in this process (page caches, statements), which tracemalloc never sees, in KB."""
    import _sqlite3
    import ctypes

    library = ctypes.CDLL(_sqlite3.__file__)
    library.sqlite3_memory_used.restype = ctypes.c_int64
    return int(library.sqlite3_memory_used()) // 1024


def print_growth(first: Any, second: Any, chats: int) -> None:
    """The lines whose live allocations grew between two snapshots, largest first."""
    import tracemalloc

    # By any frame: what the fake Telegram's server (aiohttp.web) parsed and its records keep is not the gateway's.
    ignore = [
        tracemalloc.Filter(False, tracemalloc.__file__),
        tracemalloc.Filter(False, "*/bench/*", all_frames=True),
        tracemalloc.Filter(False, "*/tests/*", all_frames=True),
        tracemalloc.Filter(False, "*/aiohttp/web_*", all_frames=True),
    ]
    stats = second.filter_traces(ignore).compare_to(first.filter_traces(ignore), "lineno")
    total = sum(stat.size_diff for stat in stats)
    print(f"tracemalloc: {total / 1024:+.1f} KB kept over {chats:,} more chats ({total / chats:+.0f} bytes a chat)")
    for stat in stats[:20]:
        frame = stat.traceback[0]
        print(f"  {stat.size_diff / 1024:+8.1f} KB {stat.count_diff:+6d} blocks  {frame.filename}:{frame.lineno}")


def run_child(chats: int, home: Path) -> dict[str, int]:
    command = [sys.executable, str(Path(__file__)), "--child", str(chats), "--home", str(home)]
    out = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def long_session(root: Path, messages: int) -> None:
    from bot.sessions.store import SessionStore
    from bot.sessions.tail import read_whole

    store = SessionStore(root)
    session = store.get("telegram:42")
    for turn in range(messages // 2):
        store.append(
            session, [{"role": "user", "content": f"[telegram DM 42 · from 42]\nQuestion {turn}: " + "w " * 25}]
        )
        store.record_usage(session, 900, 40)
        store.append(session, [{"role": "assistant", "content": f"Answer {turn}: " + "text " * 30}])
        if turn % 50 == 49:
            store.mark_consolidated(session, 2 * turn - 60)
    size = session.path.stat().st_size
    tail_times, tail_cpu = [], []
    for _ in range(20):
        started, cpu = time.perf_counter(), time.thread_time()
        loaded = SessionStore(root, tail=100).get("telegram:42")
        tail_times.append(time.perf_counter() - started)
        tail_cpu.append(time.thread_time() - cpu)
    started = time.perf_counter()
    whole = read_whole(session.path, "telegram:42")
    whole_time = time.perf_counter() - started
    assert loaded.total == len(whole.messages) == messages
    print(
        f"2. opening a {messages:,}-message session ({size / 2**20:.1f} MB file):"
        f" tail read {statistics.median(tail_times) * 1000:.2f} ms median,"
        f" {min(tail_times) * 1000:.2f} best, {max(tail_times) * 1000:.2f} worst of 20 wall clock,"
        f" {max(tail_cpu) * 1000:.2f} ms worst in CPU time"
        f" ({len(loaded.messages)} messages in memory); whole-file read {whole_time * 1000:.0f} ms"
    )


def old_format_session(root: Path) -> None:
    """The long session as relaybot wrote it before message numbers: a turn opens it with the loop's stalls timed."""
    from bot.sessions.store import SessionStore

    path = next(root.glob("*.jsonl"))
    with path.open("rb") as source:
        records = [json.loads(line) for line in source]
    for record in records:
        record.pop("n", None)
        record.pop("totals", None)
    path.write_text("".join(json.dumps(record) + "\n" for record in records))

    async def open_timed() -> tuple[float, float, float]:
        longest = 0.0

        async def tick() -> None:
            nonlocal longest
            while True:
                before = time.perf_counter()
                await asyncio.sleep(0.001)
                longest = max(longest, time.perf_counter() - before - 0.001)

        ticker = asyncio.create_task(tick())
        await asyncio.sleep(0.01)
        started = time.perf_counter()
        await SessionStore(root, tail=100).load("telegram:42")
        took = time.perf_counter() - started
        ticker.cancel()
        started = time.perf_counter()
        await SessionStore(root, tail=100).load("telegram:42")
        return took, longest, time.perf_counter() - started

    took, stall, after = asyncio.run(open_timed())
    print(
        f"3. the same session in the old file format, opened by a turn: rewritten in the current format and its"
        f" tail read, in a worker thread, in {took:.2f} s;"
        f" the event loop's longest stall meanwhile {stall * 1000:.1f} ms;"
        f" opened again (now in the current format) {after * 1000:.2f} ms"
    )


def main(chats: int, baseline: int, sessions_only: bool, gateway_counts: list[int]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        if gateway_counts and not sessions_only:
            asyncio.run(gateway_rss(Path(tmp) / "gateway", gateway_counts))
        if sessions_only:
            long_session(Path(tmp) / "long", 100_000)
            old_format_session(Path(tmp) / "long")
            return
        few = run_child(baseline, Path(tmp) / "few")
        many = run_child(chats, Path(tmp) / "many")
        growth = (many["after_kb"] - few["after_kb"]) / 1024
        print(
            f"1. idle RSS {few['idle_kb'] / 1024:.1f} MB / {many['idle_kb'] / 1024:.1f} MB;"
            f" after {baseline:,} chats {few['after_kb'] / 1024:.1f} MB ({few['cached']} sessions cached),"
            f" after {chats:,} chats {many['after_kb'] / 1024:.1f} MB ({many['cached']} cached):"
            f" {growth:+.1f} MB for {chats - baseline:,} more chats"
        )
        grew_few, grew_many = ((run["after_kb"] - run["idle_kb"]) / 1024 for run in (few, many))
        print(
            f"   growth within each process: {grew_few:+.1f} MB ({baseline:,} chats), {grew_many:+.1f} MB ({chats:,})"
        )
        long_session(Path(tmp) / "long", 100_000)
        old_format_session(Path(tmp) / "long")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chats", type=int, default=3000, help="one-turn chats in the large run")
    parser.add_argument("--baseline", type=int, default=300, help="one-turn chats in the small run")
    parser.add_argument("--sessions-only", action="store_true", help="only the 100,000-message session parts")
    parser.add_argument("--growth", type=int, help="tracemalloc snapshots N and 2N chats apart: what still grows")
    parser.add_argument("--gateway", default="300,3000,6000", help="chat counts for part 0; empty skips it")
    parser.add_argument("--gateway-only", action="store_true", help="only part 0")
    parser.add_argument("--gateway-growth", type=int, help="part 0's gateway in this process under tracemalloc")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--home", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        asyncio.run(child(args.child, args.home))
    elif args.gateway_only:
        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(gateway_rss(Path(tmp), [int(n) for n in args.gateway.split(",") if n]))
    elif args.gateway_growth is not None:
        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(gateway_growth(args.gateway_growth, Path(tmp)))
    elif args.growth is not None:
        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(growth(args.growth, Path(tmp)))
    else:
        main(args.chats, args.baseline, args.sessions_only, [int(n) for n in args.gateway.split(",") if n])

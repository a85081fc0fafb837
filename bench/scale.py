"""Scale-out on the redis bus: throughput and p99 for 1, 2 and 4 worker processes, and the bus's own overhead.

Run from the repository root:  python bench/scale.py [--messages 200] [--chats 50] [--workers 1,2,4]
                                [--parts scale,failover,takeover,overhead]
Starts a redis-server in a temp dir, the fake model in its own process (0 s, then 1 s per answer) and
the fake Telegram in this one; one real `relaybot run --role gateway` process polls it and 1, 2 or 4
real `relaybot run --role worker` processes answer, all made by `relaybot init`. A burst of user
messages is pushed to the fake Telegram at once; throughput is messages over the time from the first
push to the last reply sent, latency each message's push to its reply; each process's CPU is read from
/proc (schedstat) around the burst. The failover part SIGKILLs one of two workers while it holds
messages and times the kill to the last answer, against a worker that hangs instead (SIGSTOP: only its
lease tells it is gone). The takeover part SIGKILLs the gateway polling Telegram while a standby waits
on its lease, and times the standby's first poll, against a holder that hangs. The overhead part runs
two bots in this process, one on the local bus and one on the redis bus, asked one message at a time in
alternation (wall time and this process's CPU per message).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import math
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rig import (
    ROOT,
    Bot,
    FakeProcess,
    TimedTelegram,
    bench_config,
    init_home,
    load_average,
    process_cpu,
    write_config,
)

from bot.bus.redis.bus import RedisBus
from bot.bus.redis.inbox import WORKERS
from bot.config.schema import BusConfig

LEASE = BusConfig().lease  # a channel credential's lease, which a standby gateway waits out
WORKER_LEASE = BusConfig().worker_lease  # a worker's liveness lease, which a hung worker's messages wait out

SETTINGS = {
    "heartbeat": {"enabled": False},
    "agent": {"queue_mode": "followup"},  # one turn and one reply per message, so each is timed
    "access": {"rate_limit": 0},
    "budgets": {"guest": None},  # the senders are strangers (dm_policy open): no monthly token cap cuts a burst
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisServer:
    """A throwaway redis-server on a free port, in a temp dir, without persistence."""

    def __init__(self, folder: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise SystemExit("redis-server is not installed (apt-get install redis-server)")
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        args = ["--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(folder), "--save", ""]
        self.process = subprocess.Popen([binary, *args, "--appendonly", "no"], stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)


def p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, math.ceil(0.99 * len(ordered)) - 1)]


async def burst(telegram: TimedTelegram, messages: int, chats: int) -> tuple[float, list[float]]:
    """Push `messages` round-robin over `chats` at once; the wall time to the last reply and each latency."""
    telegram.arrived.clear()
    pushed: dict[int, float] = {}
    started = time.perf_counter()
    for n in range(messages):
        chat = 1000 + n % chats
        pushed[n] = time.perf_counter()
        telegram.text(f"q{n}q", chat_id=chat, user_id=chat)
    async with asyncio.timeout(600):
        while len(telegram.arrived) < messages:
            await asyncio.sleep(0.01)
    wall = max(telegram.arrived.values()) - started
    return wall, [telegram.arrived[n] - pushed[n] for n in range(messages)]


async def wait_for_workers(url: str, prefix: str, count: int) -> None:
    """Until `count` workers have read the inbox once (they are then ready to take messages)."""
    bus = RedisBus(url, prefix=prefix, consumer="bench-probe")
    await bus.start()
    async with asyncio.timeout(120):
        while len(await bus.redis.xinfo_consumers(bus.key("inbox"), WORKERS)) < count:
            await asyncio.sleep(0.2)
    await bus.stop()


def start_processes(
    home: Path, url: str, model_url: str, prefix: str, telegram: TimedTelegram, workers: int, first: str = "gateway"
) -> list:
    """One `relaybot run --role gateway` (or `first`) and `workers` worker processes on one redis prefix."""
    telegram_section = {"enabled": True, "token": telegram.token, "api_base": telegram.base_url}
    channels = {"telegram": {**telegram_section, "dm_policy": "open"}}
    config_file = home / "config.yaml"
    write_config(
        config_file, model_url, bus={"backend": "redis", "url": url, "prefix": prefix}, channels=channels, **SETTINGS
    )
    env = {**os.environ, "RELAYBOT_HOME": str(home), "RELAYBOT_CONFIG": str(config_file)}
    return [
        subprocess.Popen(
            [sys.executable, "-m", "bot", "run", "--role", role],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=None if os.environ.get("DEBUGF") else subprocess.DEVNULL,
        )
        for role in [first] + ["worker"] * workers
    ]


def stop_processes(processes: list) -> None:
    for process in processes:
        if process.poll() is None:
            process.terminate()
    for process in processes:
        process.wait(30)


async def scale_run(home: Path, url: str, model_url: str, workers: int, messages: int, chats: int) -> str:
    """One row of the table: one gateway process and `workers` worker processes answering a burst, with their CPU."""
    prefix = f"bench{workers}x{int(time.time() * 1000) % 10_000_000}"
    async with TimedTelegram() as telegram:
        processes = start_processes(home, url, model_url, prefix, telegram, workers)
        try:
            await wait_for_workers(url, prefix, workers)
            await telegram.wait_for_call("getUpdates", 1, timeout=120)
            before = [process_cpu(p.pid) for p in processes]
            wall, latencies = await burst(telegram, messages, chats)
            cpu = [(process_cpu(p.pid) - b) / messages * 1000 for p, b in zip(processes, before, strict=True)]
        finally:
            stop_processes(processes)
    spent = " / ".join(f"{c:.1f}" for c in cpu[1:])
    return (
        f"| {workers} | {messages / wall:7.1f} msg/s | {statistics.median(latencies) * 1000:7.0f} ms "
        f"| {p99(latencies) * 1000:7.0f} ms | {wall:5.1f} s | {cpu[0]:.1f} | {spent} | {load_average()} |"
    )


async def failover(
    home: Path, url: str, model_url: str, hang: bool = False, messages: int = 40, chats: int = 10
) -> str:
    """Two workers answer a burst (1 s model); one is SIGKILLed (or SIGSTOPped: `hang`) mid-burst: a table row with
    the time from the kill to its messages taken over and to the last answer."""
    prefix = f"failover{int(time.time() * 1000) % 10_000_000}"
    async with TimedTelegram() as telegram:
        processes = start_processes(home, url, model_url, prefix, telegram, 2)
        doomed = processes[1]
        try:
            await wait_for_workers(url, prefix, 2)
            await telegram.wait_for_call("getUpdates", 1, timeout=120)
            for n in range(messages):
                telegram.text(f"q{n}q", chat_id=2000 + n % chats, user_id=2000 + n % chats)
            probe = RedisBus(url, prefix=prefix, consumer="bench-probe")
            await probe.start()
            in_hand = held = 0
            async with asyncio.timeout(60):
                while not in_hand:
                    await asyncio.sleep(0.05)
                    in_hand = await pending_of(probe, f"-{doomed.pid}-")
            doomed.send_signal(signal.SIGSTOP if hang else signal.SIGKILL)
            killed = time.perf_counter()
            async with asyncio.timeout(60):  # the other worker claims them once it knows the worker is dead
                while pending := await pending_of(probe, f"-{doomed.pid}-"):
                    held = max(held, pending)  # entries of its sessions are still handed to it until then
                    await asyncio.sleep(0.02)
            taken = time.perf_counter() - killed
            await probe.stop()
            async with asyncio.timeout(120):
                while len(telegram.arrived) < messages:
                    await asyncio.sleep(0.01)
            last = max(telegram.arrived.values()) - killed
        finally:
            if hang:
                doomed.kill()
            stop_processes(processes)
    name = "SIGSTOP (hung: the baseline, its lease decides)" if hang else "SIGKILL"
    return f"| {name} | {in_hand} | {held} | {taken:.1f} s | {last:.1f} s | {load_average()} |"


async def failovers(home: Path, url: str, model_url: str, messages: int = 40, chats: int = 10) -> None:
    """A worker SIGKILLed mid-burst, against one that hangs (SIGSTOP): its messages move only once its lease lapsed."""
    print(f"\nFailover: 2 workers (bus.worker_lease {WORKER_LEASE:.0f} s), {messages} messages over {chats} chats,")
    print("1 s model; one worker SIGKILLed (or SIGSTOPped) while it holds messages; every message answered")
    print("| worker | held at the kill | held with those handed to it after | taken over | last answer | load |")
    print("|---|---|---|---|---|---|")
    for hang in (False, True):
        print(await failover(home, url, model_url, hang, messages, chats), flush=True)
    print("target: the last answer <= 5 s after a SIGKILL (its chats' queued 1 s turns take up to 4 s of it)")


async def takeover(home: Path, url: str, model_url: str, hang: bool = False) -> tuple[float, float, float]:
    """Two gateways on one bot token and a worker; the one polling Telegram is SIGKILLed (or SIGSTOPped: `hang`).

    Returns the lease's time left at the kill, when the standby polled Telegram, and when a message sent at the
    kill was answered, in seconds after it.
    """
    prefix = f"takeover{int(time.time() * 1000) % 10_000_000}"
    async with TimedTelegram() as telegram:
        processes = start_processes(home, url, model_url, prefix, telegram, 1)
        processes.append(start_processes(home, url, model_url, prefix, telegram, 0)[0])  # the standby gateway
        try:
            await wait_for_workers(url, prefix, 1)
            await telegram.wait_for_call("getUpdates", 1, timeout=120)
            await asyncio.sleep(1.0)  # both gateways settled: the holder renews, the standby waits on the lease
            probe = RedisBus(url, prefix=prefix, consumer="bench-probe")
            await probe.start()
            [lease] = await probe.redis.keys(probe.key("lease", "channel", "telegram", "*"))
            holder, left = await probe.redis.get(lease), await probe.redis.pttl(lease)
            await probe.stop()
            [doomed] = [p for p in processes if f"-{p.pid}-" in holder]
            doomed.send_signal(signal.SIGSTOP if hang else signal.SIGKILL)
            killed = time.perf_counter()
            polls = len(telegram.calls)
            telegram.text("q0q", chat_id=3000, user_id=3000)
            async with asyncio.timeout(60):
                while not any(method == "getUpdates" for method, _ in telegram.calls[polls:]):
                    await asyncio.sleep(0.01)
            polled = time.perf_counter() - killed
            answered = await telegram.reply_to(0, timeout=60) - killed
        finally:
            if hang:
                doomed.kill()
            stop_processes(processes)
    return left / 1000, polled, answered


async def scheduler_takeover(home: Path, url: str, model_url: str) -> tuple[float, float]:
    """Two `--role all` processes; the one holding the leases is SIGKILLed: when the standby held the channel's
    lease and when the scheduler's, in seconds after the kill."""
    prefix = f"scheduler{int(time.time() * 1000) % 10_000_000}"
    async with TimedTelegram() as telegram:
        processes = [start_processes(home, url, model_url, prefix, telegram, 0, "all")[0] for _ in range(2)]
        probe = RedisBus(url, prefix=prefix, consumer="bench-probe")
        try:
            await wait_for_workers(url, prefix, 2)
            await probe.start()
            scheduler, taken = probe.key("lease", "scheduler"), {}
            async with asyncio.timeout(120):
                while not (holder := await probe.redis.get(scheduler)):
                    await asyncio.sleep(0.05)
            await asyncio.sleep(1.0)  # both settled: the leader renews, the standby waits on the channel's lease
            [channel] = await probe.redis.keys(probe.key("lease", "channel", "telegram", "*"))
            [doomed] = [p for p in processes if f"-{p.pid}-" in holder]
            doomed.send_signal(signal.SIGKILL)
            killed = time.perf_counter()
            async with asyncio.timeout(60):
                while len(taken) < 2:
                    for name, key in (("channel", channel), ("scheduler", scheduler)):
                        if name not in taken and await probe.redis.get(key) not in (None, holder):
                            taken[name] = time.perf_counter() - killed
                    await asyncio.sleep(0.01)
        finally:
            await probe.stop()
            stop_processes(processes)
    return taken["channel"], taken["scheduler"]


async def takeovers(home: Path, url: str, model_url: str) -> None:
    """The standby's takeover after a SIGKILL, against a hung holder (SIGSTOP) that only its lease's ttl unseats."""
    print(f"\nStandby gateway: two gateways on one bot token (bus.lease {LEASE:.0f} s), one worker, 0 s model;")
    print("the one polling Telegram is SIGKILLed, or SIGSTOPped (hung: the baseline, the lease's ttl alone decides)")
    print("| holder | lease left at the kill | standby polls Telegram | a message sent at the kill answered | load |")
    print("|---|---|---|---|---|")
    for hang in (False, True):
        left, polled, answered = await takeover(home, url, model_url, hang)
        name = "SIGSTOP (baseline)" if hang else "SIGKILL"
        print(f"| {name} | {left:.1f} s | {polled:.1f} s | {answered:.1f} s | {load_average()} |", flush=True)
    print("target: the standby takes over <= 8 s after a SIGKILL")
    print("\nScheduler: two `--role all` processes, the one holding the leases SIGKILLed; the standby holds")
    print("| the channel's lease | the scheduler's lease | load |\n|---|---|---|")
    channel, scheduler = await scheduler_takeover(home, url, model_url)
    print(f"| {channel:.1f} s | {scheduler:.1f} s | {load_average()} |", flush=True)


async def pending_of(probe: RedisBus, name_part: str) -> int:
    """How many inbox entries the worker whose consumer name contains `name_part` holds unacknowledged."""
    summary = await probe.redis.xpending(probe.key("inbox"), WORKERS)
    mine = [c for c in summary["consumers"] if name_part in c["name"]]
    return int(mine[0]["pending"]) if mine else 0


def agent_bot(home: Path, model_url: str, backend: dict[str, str]) -> Bot:
    """One bot in this process on the given bus: the journal or Redis, as `relaybot run` would use."""
    from bot.app.agent_wiring import AgentApp
    from bot.app.backend import stores_for

    config = bench_config(home, model_url, bus=backend, **SETTINGS)
    bot = Bot(config)
    bot.app = AgentApp(config, bus=stores_for(config).bus())
    return bot


Samples = tuple[list[float], list[float]]  # each round trip's wall time, and this process's CPU time for it


async def sequential(local: Bot, shared: Bot, rounds: int) -> tuple[Samples, Samples]:
    """Both bots alive, asked one message at a time in alternation, each first every other round (no drift between)."""
    samples: dict[str, Samples] = {"local": ([], []), "redis": ([], [])}
    async with local, shared:
        for n in range(rounds + 5):
            order = [("local", local), ("redis", shared)]
            for name, bot in order if n % 2 == 0 else order[::-1]:
                started, spent = time.perf_counter(), time.process_time()
                await bot.ask("telegram:7", f"round {n}")
                if n >= 5:  # the first few warm connections and caches
                    samples[name][0].append(time.perf_counter() - started)
                    samples[name][1].append(time.process_time() - spent)
    return samples["local"], samples["redis"]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--chats", type=int, default=50)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--rounds", type=int, default=100, help="sequential messages per bus for the overhead")
    parts = "scale,failover,takeover,overhead"
    parser.add_argument("--parts", default=parts, help="which parts to run, comma-separated")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    logging.basicConfig(level=logging.ERROR)
    counts = [int(n) for n in args.workers.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        redis = RedisServer(Path(tmp))
        try:
            home = Path(tmp) / "home"
            init_home(home)
            for latency in (0.0, 1.0) if "scale" in parts else ():
                with FakeProcess(latency=latency) as model:
                    print(f"\n{args.messages} messages over {args.chats} chats at once, {latency:.0f} s model")
                    print("CPU columns: milliseconds of CPU per message, the gateway's and each worker's")
                    print("| workers | throughput | median | p99 | wall | gateway CPU | worker CPU | load |")
                    print("|---|---|---|---|---|---|---|---|")
                    for workers in counts:
                        row = await scale_run(home, redis.url, model.base_url, workers, args.messages, args.chats)
                        print(row, flush=True)
            if "failover" in parts:
                with FakeProcess(latency=1.0) as model:
                    await failovers(home, redis.url, model.base_url)
            if "takeover" in parts:
                with FakeProcess(latency=0.0) as model:
                    await takeovers(home, redis.url, model.base_url)
            if "overhead" in parts:
                with FakeProcess(latency=0.0) as model:
                    shared = {"backend": "redis", "url": redis.url, "prefix": "overhead"}
                    local, on_redis = await sequential(
                        agent_bot(Path(tmp) / "local", model.base_url, {"backend": "local"}),
                        agent_bot(Path(tmp) / "redis", model.base_url, shared),
                        args.rounds,
                    )
                each = f"{args.rounds} rounds each, alternating"
                print(f"\nOne message at a time, one process, 0 s model ({each}, {load_average()}):")
                print("| bus | median | p99 | CPU median | CPU mean |\n|---|---|---|---|---|")
                for name, (samples, cpu) in (("local (SQLite journal)", local), ("redis", on_redis)):
                    print(
                        f"| {name} | {statistics.median(samples) * 1000:6.1f} ms | {p99(samples) * 1000:6.1f} ms "
                        f"| {statistics.median(cpu) * 1000:5.2f} ms | {statistics.mean(cpu) * 1000:5.2f} ms |"
                    )
                overhead = (statistics.median(on_redis[0]) - statistics.median(local[0])) * 1000
                cpu_overhead = (statistics.median(on_redis[1]) - statistics.median(local[1])) * 1000
                print(f"redis bus overhead per message (median): {overhead:+.1f} ms wall, {cpu_overhead:+.2f} ms CPU")
        finally:
            redis.stop()


if __name__ == "__main__":
    asyncio.run(main())

"""What a turn's session work costs: the file store, the Redis store on one worker, and alternating between two.

Run from the repository root: python bench/redis_sessions.py [--turns 2000]

Needs `redis-server` on the PATH; one is started on a free port in a temp dir. A turn here is
the store calls the agent loop makes: get, append the user message, record usage, append the
reply. "two workers" alternates turns between two stores, so every get finds its cache one turn
behind and fetches the two messages it lacks. Then a 100,000-message session is opened cold.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from bot.cluster.redis import RedisState
from bot.sessions.redis_store import RedisSessionStore
from bot.sessions.store import SessionStore


def start_redis(directory: Path) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    args = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", str(directory), "--save", ""]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            break
        except OSError:
            time.sleep(0.05)
    return process, f"redis://127.0.0.1:{port}/0"


def turns(stores: list[Any], count: int, key: str) -> list[float]:
    """Per-turn milliseconds, turn n on stores[n % len(stores)]."""
    took = []
    for n in range(count):
        store = stores[n % len(stores)]
        started = time.perf_counter()
        session = store.get(key)
        store.append(session, [{"role": "user", "content": f"question {n} " * 8}], inbound_ids=[f"m{n}"])
        store.record_usage(session, 900, 120)
        store.append(session, [{"role": "assistant", "content": f"answer {n} " * 30}])
        took.append((time.perf_counter() - started) * 1000)
    return took


def report(name: str, took: list[float]) -> None:
    p99 = sorted(took)[int(len(took) * 0.99)]
    print(f"{name:<22} median {statistics.median(took):.3f} ms  p99 {p99:.3f} ms per turn")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=2000)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        process, url = start_redis(Path(temp))
        try:
            report("file store", turns([SessionStore(Path(temp) / "sessions")], options.turns, "bench:1"))
            shared = RedisState(url)
            report("redis, one worker", turns([RedisSessionStore(shared)], options.turns, "bench:2"))
            pair = [RedisSessionStore(RedisState(url)), RedisSessionStore(RedisState(url))]
            report("redis, two workers", turns(pair, options.turns, "bench:3"))
            writer = RedisSessionStore(shared)
            big = writer.get("bench:big")
            for _ in range(1000):
                writer.append(big, [{"role": "user", "content": "x" * 200}] * 100)
            started = time.perf_counter()
            cold = RedisSessionStore(RedisState(url)).get("bench:big")
            cold_ms = (time.perf_counter() - started) * 1000
            print(f"cold open of a {cold.total:,}-message session: {cold_ms:.2f} ms ({len(cold.messages)} read)")
        finally:
            process.terminate()
            process.wait(5)


if __name__ == "__main__":
    main()

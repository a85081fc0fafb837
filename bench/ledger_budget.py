"""What a budget check and a ledger write cost: SQLite against Redis (day counters), as the ledger grows.

Run from the repository root: python bench/ledger_budget.py [--calls 1000 30000]

Starts its own redis-server on a free port. For each size, records that many calls spread over the
last 30 days in both ledgers, then times `BudgetGuard.check` for one sender (a daily and a monthly
sum) and one `record`.
"""

from __future__ import annotations

import argparse
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.bus import Trust  # noqa: E402
from bot.cluster.redis import RedisState  # noqa: E402
from bot.config.schema import BudgetsConfig, Limit  # noqa: E402
from bot.usage.budgets import BudgetGuard  # noqa: E402
from bot.usage.charge import Charge  # noqa: E402
from bot.usage.ledger import CallRecord, Ledger, UsageLedger  # noqa: E402
from bot.usage.redis_ledger import RedisUsageLedger  # noqa: E402

SENDERS = [f"telegram:{n}" for n in range(50)]


def start_redis(directory: Path) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    binary = shutil.which("redis-server") or sys.exit("redis-server is not installed")
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(directory), "--save", ""]
    process = subprocess.Popen([*args, "--appendonly", "no"], stdout=subprocess.DEVNULL)
    for _ in range(250):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return process, f"redis://127.0.0.1:{port}/0"
        except OSError:
            time.sleep(0.02)
    sys.exit("redis-server did not start")


def fill(ledgers: list[Ledger], count: int, now: float) -> None:
    rng = random.Random(1)
    for _ in range(count):
        call = CallRecord(
            now - rng.uniform(0, 30 * 86400), "telegram:1", rng.choice(SENDERS), "chat", "openai/x",
            rng.randint(100, 2000), rng.randint(10, 500), 0, rng.random() / 1000, False, 0.4, "ok",
        )  # fmt: skip
        for ledger in ledgers:
            ledger.record(call)


def per_call(action: object, rounds: int) -> float:
    started = time.perf_counter()
    for _ in range(rounds):
        action()  # type: ignore[operator]
    return (time.perf_counter() - started) / rounds * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, nargs="+", default=[1_000, 30_000])
    parser.add_argument("--rounds", type=int, default=300)
    options = parser.parse_args()
    now = time.time()
    budgets = BudgetsConfig(user=Limit(daily_tokens=10**12, monthly_tokens=10**12))
    charge = Charge("chat", "telegram:1", SENDERS[0], Trust.USER)
    sample = CallRecord(now, "telegram:1", SENDERS[0], "chat", "openai/x", 500, 100, 0, 0.001, False, 0.4, "ok")
    print(f"{'calls':>8}  {'ledger':<7} {'budget check':>13} {'record':>9}")
    for count in options.calls:
        with tempfile.TemporaryDirectory() as directory:
            process, url = start_redis(Path(directory))
            try:
                sqlite = UsageLedger(Path(directory) / "usage.db")
                redis = RedisUsageLedger(RedisState(url, "bench"), "UTC")
                fill([sqlite, redis], count, now)
                for name, ledger in (("sqlite", sqlite), ("redis", redis)):
                    guard = BudgetGuard(budgets, ledger, "UTC")
                    check = per_call(lambda guard=guard: guard.check(charge), options.rounds)
                    write = per_call(lambda ledger=ledger: ledger.record(sample), options.rounds)
                    print(f"{count:>8,}  {name:<7} {check:>10.0f} µs {write:>6.0f} µs")
                sqlite.close()
            finally:
                process.terminate()
                process.wait(5)


if __name__ == "__main__":
    main()

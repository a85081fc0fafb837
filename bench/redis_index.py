"""The memory index on Redis against the SQLite one, on the same history: indexing cost, query latency (interleaved,
one question on each in turn, so load hits both alike), Redis memory, and whether both found the same passages.

Run from the repository root: python bench/redis_index.py [--scale 10000,100000] [--questions 300]

Needs `redis-server` on the PATH; one is started on a free port in a temp dir. The history is bench/recall.py's
generated chat (its facts among chatter, as session files, twice reset with /new) at each `--scale` count of
messages; each question is searched as the recall tool searches (windows, second pass) through MemoryIndexes.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from recall import KEY, ZONE, lists, write_sessions
from recall_corpus import build_corpus
from redis_sessions import start_redis
from rig import load_average

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.cluster.redis import RedisState  # noqa: E402
from bot.memory.index.recall import FURTHER, REACH, RESULT_CHARS, RESULTS, WINDOW_CHARS  # noqa: E402
from bot.memory.index.redis.store import RedisIndexes  # noqa: E402
from bot.memory.index.scopes import MemoryIndexes  # noqa: E402
from bot.sessions.logs import FileLogs  # noqa: E402


def p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[int(0.95 * (len(ordered) - 1))] * 1000


async def compare(messages: int, questions: int, root: Path, shared: RedisState) -> None:
    """Index one history both ways, then time each question on each in turn."""
    corpus = build_corpus(2400, questions, seed=7)
    total = write_sessions(root / "sessions", corpus, max(0, messages // 2 - len(corpus.exchanges)))
    scope = root / "ws" / "memory"
    made = {
        name: MemoryIndexes(
            FileLogs(root / "sessions"),
            lists(root),
            root / "ws",
            root / f"state-{name}",
            ZONE,
            clock=corpus.end.timestamp,
            home=home,
        )
        for name, home in (("sqlite", None), ("redis", RedisIndexes(shared)))
    }
    before = int(shared.client.info("memory")["used_memory"])
    built = {}
    for name, indexes in made.items():
        started = time.perf_counter()
        await indexes.join(scope, KEY)
        built[name] = time.perf_counter() - started
    used = int(shared.client.info("memory")["used_memory"]) - before
    took: dict[str, list[float]] = {name: [] for name in made}
    same = 0
    for question, _, _ in corpus.questions:
        found = {}
        for name, indexes in made.items():
            began = time.perf_counter()
            hits = await indexes.search(
                scope, question, RESULTS + FURTHER, window_chars=(WINDOW_CHARS, RESULT_CHARS), follow=True, reach=REACH
            )
            took[name].append(time.perf_counter() - began)
            found[name] = [[each.passage.asked for each in hit.window] for hit in hits]
        same += found["sqlite"] == found["redis"]
    for indexes in made.values():
        await indexes.stop()
    print(f"{total:,} messages, {len(corpus.questions)} questions ({load_average()}):")
    for name in made:
        print(
            f"  {name:6}  indexing {built[name] / total * 1000:.3f} ms/message; query p50 "
            f"{statistics.median(took[name]) * 1000:.2f} ms, p95 {p95(took[name]):.2f} ms"
        )
    print(f"  redis memory {used / 1e6:.0f} MB ({used / total:.0f} bytes a message)")
    print(f"  the same five windows, in the same order, on both: {same} of {len(corpus.questions)} questions")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="10000,100000")
    parser.add_argument("--questions", type=int, default=300)
    args = parser.parse_args()
    for messages in (int(n) for n in args.scale.split(",")):
        with tempfile.TemporaryDirectory() as folder:
            server, url = start_redis(Path(folder))
            shared = RedisState(url, prefix="bench")
            try:
                await compare(messages, args.questions, Path(folder), shared)
            finally:
                shared.client.close()
                server.terminate()
                server.wait(5)


if __name__ == "__main__":
    asyncio.run(main())

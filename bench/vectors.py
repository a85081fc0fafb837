"""Semantic memory search: the cost of storing passage vectors and of one exact nearest-vector query, with the vectors
in the index's SQLite file and in Redis (`memory.index: redis`).

Run from the repository root: python bench/vectors.py [--sizes 10000,100000] [--dims 384,1536] [--queries 200]
[--homes sqlite,redis]

For each size, width and home, one scope's index gets that many HISTORY.md-style passages, then random unit
vectors for all of them through the home's vector store in batches of 1,000, as the background embedding stores
them. Printed: storing per passage, the first search (reading every vector into memory, done in the
background after embedding in use), query p50 and p95 over `--queries` searches for the 60 nearest (what
fusion takes; on Redis each one first asks for vectors stored since, one round trip), and the index file's size
on disk or the Redis memory it took. The Redis run needs `redis-server` on the PATH; one is started on a free port
in a temp dir.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from redis_sessions import start_redis

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.cluster.redis import RedisState  # noqa: E402
from bot.memory.index.passages import Passage  # noqa: E402
from bot.memory.index.protocols import IndexHome  # noqa: E402
from bot.memory.index.redis.store import RedisIndexes  # noqa: E402
from bot.memory.index.store import FileIndexes  # noqa: E402

CANDIDATES = 60
BATCH = 1000
CHUNK = 5000


def measure(size: int, dims: int, queries: int, folder: Path, home: IndexHome, shared: RedisState | None) -> str:
    """One line of figures for `size` passages of `dims`-wide vectors kept in `home`."""
    path = folder / "index.sqlite3"
    index = home.open("bench", path)
    for start in range(0, size, CHUNK):  # in parts: one Redis script of 100,000 passages outlasts the client's timeout
        count = range(start, min(start + CHUNK, size))
        passages = [Passage("entry", 1.7e9 + n * 60, "", f"entry {n} about the garden") for n in count]
        index.add_entries(passages, "history", str(start or ""), str(count.stop))
    used = int(shared.client.info("memory")["used_memory"]) if shared is not None else 0
    store = home.vectors("bench", path, "bench")
    rng = np.random.default_rng(1)
    started = time.perf_counter()
    while batch := store.pending(BATCH):
        store.store(batch, rng.standard_normal((len(batch), dims), dtype=np.float32))
    storing = (time.perf_counter() - started) / size
    started = time.perf_counter()
    store.load()
    loading = time.perf_counter() - started
    times = []
    for _ in range(queries):
        query = rng.standard_normal(dims)
        started = time.perf_counter()
        store.nearest(query, CANDIDATES, None, None)
        times.append(time.perf_counter() - started)
    times.sort()
    if shared is not None:
        kept = f"Redis {(int(shared.client.info('memory')['used_memory']) - used) / 2**20:4.0f} MiB for the vectors"
    else:
        kept = f"disk {sum(path.stat().st_size for path in folder.iterdir()) / 2**20:4.0f} MiB"
    store.close()
    index.close()
    home.delete("bench", path)
    return (
        f"{size:>7,} passages × {dims:>4}: store {storing * 1e6:5.0f} µs/passage, first load {loading * 1e3:5.0f} ms, "
        f"query p50 {times[len(times) // 2] * 1e3:6.2f} ms, p95 {times[int(len(times) * 0.95)] * 1e3:6.2f} ms, {kept}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="passages per scope, comma-separated")
    parser.add_argument("--dims", default="384,1536", help="vector widths, comma-separated")
    parser.add_argument("--queries", type=int, default=200, help="searches per size")
    parser.add_argument("--homes", default="sqlite,redis", help="where the vectors are kept: sqlite, redis or both")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    for size in (int(value) for value in args.sizes.split(",")):
        for dims in (int(value) for value in args.dims.split(",")):
            for name in args.homes.split(","):
                with tempfile.TemporaryDirectory() as folder:
                    print(f"{name:6} " + run(name, size, dims, args.queries, Path(folder)), flush=True)


def run(name: str, size: int, dims: int, queries: int, folder: Path) -> str:
    """Measure on the home `name`: SQLite files, or a redis-server of its own in `folder`."""
    if name == "sqlite":
        return measure(size, dims, queries, folder, FileIndexes(), None)
    server, url = start_redis(folder)
    shared = RedisState(url, prefix="bench")
    try:
        return measure(size, dims, queries, folder, RedisIndexes(shared), shared)
    finally:
        shared.client.close()
        server.terminate()
        server.wait(5)


if __name__ == "__main__":
    main()

"""Semantic memory search: the cost of storing passage vectors and of one exact nearest-vector query.

Run from the repository root: python bench/vectors.py [--sizes 10000,100000] [--dims 384,1536] [--queries 200]

For each size and width, one scope's index gets that many HISTORY.md-style passages, then random unit
vectors for all of them through `PassageVectors` in batches of 1,000, as the background embedding stores
them. Printed: storing per passage, the first search (reading every vector into memory, done in the
background after embedding in use), query p50 and p95 over `--queries` searches for the 60 nearest (what
fusion takes), and the index file's size on disk.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from bot.memory.index.passages import Passage
from bot.memory.index.store import MemoryIndex
from bot.memory.index.vectors import PassageVectors

CANDIDATES = 60
BATCH = 1000


def measure(size: int, dims: int, queries: int, folder: Path) -> str:
    """One line of figures for `size` passages of `dims`-wide vectors."""
    index = MemoryIndex.open(folder / "index.sqlite3")
    passages = [Passage("entry", 1.7e9 + n * 60, "", f"entry {n} about the garden") for n in range(size)]
    index.add_entries(passages, "history", "", "bench")
    store = PassageVectors(index.path, "bench")
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
    disk = sum(path.stat().st_size for path in folder.iterdir())
    store.close()
    index.close()
    return (
        f"{size:>7,} passages × {dims:>4}: store {storing * 1e6:5.0f} µs/passage, first load {loading * 1e3:5.0f} ms, "
        f"query p50 {times[len(times) // 2] * 1e3:6.2f} ms, p95 {times[int(len(times) * 0.95)] * 1e3:6.2f} ms, "
        f"disk {disk / 2**20:4.0f} MiB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="passages per scope, comma-separated")
    parser.add_argument("--dims", default="384,1536", help="vector widths, comma-separated")
    parser.add_argument("--queries", type=int, default=200, help="searches per size")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    for size in (int(value) for value in args.sizes.split(",")):
        for dims in (int(value) for value in args.dims.split(",")):
            with tempfile.TemporaryDirectory() as folder:
                print(measure(size, dims, args.queries, Path(folder)), flush=True)


if __name__ == "__main__":
    main()

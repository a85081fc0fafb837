"""Memory recall, measured: evidence coverage of the recall tool's top five and of the auto-recalled prompt block,
against a plain BM25 over whole exchanges; index cost per message; query latency and disk at scale.

Run from the repository root: python bench/recall.py --locomo ../shared/data/locomo-dev [--conversations N]
                             [--questions N] [--quick] [--json FILE] [--show q26-3,…]
                             [--embeddings local [--min-similarity 0.3]]
                         or: python bench/recall.py [--exchanges 2400] [--questions 300] [--scale 10000,100000]
                             [--big-file-mb 50]

With --locomo, the figures that count (../shared/MEMORY_EVAL.md): each LoCoMo conversation of DIR played through
the real gateway (bench/locomo/), then its questions asked in the same chat; evidence coverage of recall's result,
of the prompt and of both, per category, beside plain BM25 on the same history and the issue's targets. Then,
unless --quick, the costs at 100,000 messages of the generated set below (query p95, indexing per message).
--conversations and --questions take the first N of each; --json writes every figure (each question's too);
--show prints, for the questions tagged, the evidence lines, which of them were covered, and what recall found.
--embeddings local fuses the in-process embedding model's nearest passages in (memory.embeddings.model: local),
every passage embedded before the first question; without it, keywords alone (the default config).

Without it, a smoke test on a generated set: the conversation is made up here (bench/recall_corpus.py): facts told
in passing among chatter over ten weeks, asked about at the end in other words. It is written as one chat's session
files in the local store's format (twice reset with /new, so two of them are archives) and indexed by the real
MemoryIndexes. The baseline is what recall did before the index: an FTS5 BM25 (no stemming) over each whole exchange
as stored, the query's words OR-ed. Coverage counts a question when its evidence is among the tool's five passages,
and for the prompt when the block (1,500 tokens) shows the evidence and its answer. At each `--scale` count of
messages (the corpus plus chatter), the 300 questions are timed through MemoryIndexes.search (its catch-up check
included), the index's disk use read, and the first indexing of the whole session file timed with the event loop's
longest stall beside it. Last, one 50 MB session file is indexed from scratch, the event loop's longest stall timed
meanwhile. As in the gateway, a backlog of over 4 MB is indexed by a child process (bot/memory/index/bulk.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from zoneinfo import ZoneInfo

from locomo.run import run as run_locomo
from recall_corpus import REPLY_PAD, Corpus, build_corpus
from rig import load_average

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.llm.tokens import CHARS_PER_TOKEN  # noqa: E402
from bot.memory.index.bulk import ChildIndexer  # noqa: E402
from bot.memory.index.recall import FURTHER, REACH, RESULT_CHARS, RESULTS, WINDOW_CHARS  # noqa: E402
from bot.memory.index.rendering import recalled_block  # noqa: E402
from bot.memory.index.scopes import MemoryIndexes  # noqa: E402
from bot.memory.members import FileMembers  # noqa: E402
from bot.sessions.logs import FileLogs  # noqa: E402

KEY = "telegram:42"
FILE = "telegram%3A42"
ZONE = "UTC"
BUDGET_TOKENS = 1500


def lists(root: Path) -> FileMembers:
    """Where the bench's scope lists its sessions, as the local store keeps them."""
    return FileMembers(root / "state" / "memory_scopes")


def header(when: float) -> str:
    stamp = time.strftime("%Y-%m-%d %H:%M %A", time.gmtime(when))
    return f"[telegram DM 42 · from Sam (42) · {stamp}]\n"


def write_sessions(folder: Path, corpus: Corpus, chatter: int = 0) -> int:
    """The corpus (then `chatter` more exchanges of filler) as the chat's session files; how many messages."""
    folder.mkdir(parents=True, exist_ok=True)
    exchanges = [(text, reply, when.timestamp()) for text, reply, when in corpus.exchanges]
    first = exchanges[0][2]
    step = (exchanges[-1][2] - first) / max(1, len(exchanges) + chatter)
    for n in range(chatter):  # spread over the same weeks, between the corpus' own exchanges
        exchanges.append((f"Random thought number {n}: {REPLY_PAD[n % 90 : n % 90 + 60]}", REPLY_PAD, first + n * step))
    exchanges.sort(key=lambda item: item[2])
    cuts = {len(exchanges) // 3, 2 * len(exchanges) // 3}  # /new twice: two archived files and the live one
    handle = (folder / f"{FILE}.jsonl").open("w")
    n = archives = 0
    for index, (text, reply, ts) in enumerate(exchanges):
        if index in cuts:
            handle.close()
            archives += 1
            os.replace(folder / f"{FILE}.jsonl", folder / f"{FILE}.2026010{archives}T000000.archived.jsonl")
            handle, n = (folder / f"{FILE}.jsonl").open("w"), 0
        for role, content in (("user", header(ts) + text), ("assistant", reply)):
            record = {"type": "message", "ts": ts, "n": n, "message": {"role": role, "content": content}}
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            n += 1
    handle.close()
    return 2 * len(exchanges)


def baseline_hits(corpus: Corpus) -> list[list[int]]:
    """Top five exchange indexes per question by plain BM25 over whole stored exchanges, all words OR-ed."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE x USING fts5(text)")
    db.executemany(
        "INSERT INTO x (rowid, text) VALUES (?, ?)",
        ((i, f"user: {header(w.timestamp())}{t}\nassistant: {r}") for i, (t, r, w) in enumerate(corpus.exchanges)),
    )
    found = []
    for question, _, _ in corpus.questions:
        words = sorted({word.lower() for word in re.findall(r"\w+", question)})
        expression = " OR ".join(f'"{word}"*' for word in words)
        rows = db.execute("SELECT rowid FROM x WHERE x MATCH ? ORDER BY bm25(x) LIMIT 5", (expression,))
        found.append([row[0] for row in rows])
    return found


async def coverage(corpus: Corpus, root: Path) -> tuple[float, float, float]:
    """(tool, prompt, baseline) evidence coverage over the corpus' questions."""
    write_sessions(root / "sessions", corpus)
    indexes = MemoryIndexes(
        FileLogs(root / "sessions"), lists(root), root / "ws", root / "state", ZONE, clock=corpus.end.timestamp
    )
    scope = root / "ws" / "memory"
    await indexes.join(scope, KEY)
    tool = prompt = 0
    for question, evidence, answer in corpus.questions:
        told = corpus.exchanges[evidence][0]
        hits = await indexes.search(scope, question, 5)
        found = any(hit.stored.passage.asked == told for hit in hits)
        tool += found
        block = recalled_block(hits, ZoneInfo(ZONE), BUDGET_TOKENS * CHARS_PER_TOKEN)
        prompt += found and answer in block and told in block
    await indexes.stop()
    base = sum(evidence in top for (_, evidence, _), top in zip(corpus.questions, baseline_hits(corpus), strict=True))
    count = len(corpus.questions)
    return tool / count, prompt / count, base / count


async def at_scale(corpus: Corpus, messages: int, root: Path) -> dict[str, float]:
    """Index a scope of `messages` messages, then time the questions; the index's size on disk."""
    chatter = max(0, messages // 2 - len(corpus.exchanges))
    total = write_sessions(root / "sessions", corpus, chatter)
    size = sum(path.stat().st_size for path in (root / "sessions").iterdir())
    indexes = MemoryIndexes(
        FileLogs(root / "sessions"),
        lists(root),
        root / "ws",
        root / "state",
        ZONE,
        clock=corpus.end.timestamp,
        bulk=ChildIndexer(root / "sessions"),
    )
    scope = root / "ws" / "memory"
    stall = 0.0
    indexing = True

    async def beat() -> None:
        nonlocal stall
        while indexing:
            started = time.perf_counter()
            await asyncio.sleep(0.001)
            stall = max(stall, time.perf_counter() - started - 0.001)

    ticker = asyncio.create_task(beat())
    started = time.perf_counter()
    await indexes.join(scope, KEY)
    built = time.perf_counter() - started
    indexing = False
    await ticker
    latencies = []
    for question, _, _ in corpus.questions:
        began = time.perf_counter()
        await indexes.search(
            scope, question, RESULTS + FURTHER, window_chars=(WINDOW_CHARS, RESULT_CHARS), follow=True, reach=REACH
        )
        latencies.append(time.perf_counter() - began)
    incremental = await append_cost(indexes, scope, root / "sessions" / f"{FILE}.jsonl", 500)
    await indexes.stop()
    path = indexes.path_for(scope)
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    disk = sum(p.stat().st_size for p in path.parent.iterdir())
    ordered = sorted(latencies)
    return {
        "messages": total,
        "file_mb": size / 1e6,
        "build_s": built,
        "per_message_ms": built / total * 1000,
        "incremental_ms": incremental * 1000,
        "stall_ms": stall * 1000,
        "p50_ms": statistics.median(ordered) * 1000,
        "p95_ms": ordered[int(0.95 * (len(ordered) - 1))] * 1000,
        "disk_mb": disk / 1e6,
    }


async def big_file(root: Path, megabytes: int) -> tuple[float, float, int]:
    """One live session file of about `megabytes` MB indexed from scratch: seconds, the event loop's longest stall
    (ms) meanwhile, and how many messages it holds."""
    folder = root / "sessions"
    folder.mkdir(parents=True)
    n = 0
    with (folder / f"{FILE}.jsonl").open("w") as handle:
        while handle.tell() < megabytes * 1_000_000:
            content = f"{header(1.7e9 + n)}note {n}: {REPLY_PAD}" if n % 2 == 0 else REPLY_PAD * 2
            role = "user" if n % 2 == 0 else "assistant"
            record = {"type": "message", "ts": 1.7e9 + n, "n": n, "message": {"role": role, "content": content}}
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            n += 1
    indexes = MemoryIndexes(FileLogs(folder), lists(root), root / "ws", root / "state", ZONE, bulk=ChildIndexer(folder))
    stall = 0.0
    indexing = True

    async def beat() -> None:
        nonlocal stall
        while indexing:
            started = time.perf_counter()
            await asyncio.sleep(0.001)
            stall = max(stall, time.perf_counter() - started - 0.001)

    ticker = asyncio.create_task(beat())
    started = time.perf_counter()
    await indexes.join(root / "ws" / "memory", KEY)
    took = time.perf_counter() - started
    indexing = False
    await ticker
    await indexes.stop()
    return took, stall * 1000, n


async def append_cost(indexes: MemoryIndexes, scope: Path, live: Path, exchanges: int) -> float:
    """Seconds per message to index messages saved one exchange at a time, each caught up at once (as a turn)."""
    with live.open() as handle:
        n = sum(1 for _ in handle)
    spent = 0.0
    for count in range(exchanges):
        ts = time.time()
        with live.open("a") as handle:
            for role, content in (("user", f"{header(ts)}appended note {count} about the boat"), ("assistant", "ok")):
                record = {"type": "message", "ts": ts, "n": n, "message": {"role": role, "content": content}}
                handle.write(json.dumps(record) + "\n")
                n += 1
        started = time.perf_counter()
        await indexes.join(scope, KEY)
        spent += time.perf_counter() - started
    return spent / (2 * exchanges)


async def locomo(args: argparse.Namespace) -> None:
    """The LoCoMo figures, then (unless --quick) the costs at 100,000 messages; all of them to --json if given."""
    show = frozenset(args.show.split(",")) if args.show else frozenset()
    memory = None
    if args.embeddings:
        memory = {"embeddings": {"model": args.embeddings, "min_similarity": args.min_similarity}}
        print(f"semantic search with memory.embeddings.model {args.embeddings}, min_similarity {args.min_similarity}")
    figures = await run_locomo(Path(args.locomo), args.conversations, args.questions, load_average(), show, memory)
    figures["embeddings"] = memory
    if not args.quick:
        corpus = build_corpus(args.exchanges, 300, seed=args.seed)
        with tempfile.TemporaryDirectory() as folder:
            found = figures["costs"] = await at_scale(corpus, 100_000, Path(folder))
        p95 = found["p95_ms"]
        print(
            f"at {found['messages']:,.0f} messages (generated set): query p95 {p95:.2f} ms   target <= 30 ms "
            f"{'met' if p95 <= 30 else 'MISSED'}; indexing {found['per_message_ms']:.3f} ms/message at "
            f"first, {found['incremental_ms']:.3f} ms/message saved one exchange at a time   target <= 1 ms "
            f"{'met' if max(found['per_message_ms'], found['incremental_ms']) <= 1 else 'MISSED'} ({load_average()})"
        )
    if args.json:
        Path(args.json).write_text(json.dumps({"command": sys.argv, **figures}, indent=2))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", metavar="DIR", help="a folder of LoCoMo conversations (26.json, …)")
    parser.add_argument("--conversations", type=int, help="with --locomo: only the first N conversations")
    parser.add_argument("--quick", action="store_true", help="with --locomo: leave out the costs at 100,000 messages")
    parser.add_argument("--json", metavar="FILE", help="with --locomo: write every figure to FILE")
    parser.add_argument("--show", metavar="TAGS", help="with --locomo: what the model held for q26-3,q30-7,…")
    embeddings_help = "with --locomo: fuse in semantic search with this memory.embeddings.model (local: in-process)"
    parser.add_argument("--embeddings", metavar="MODEL", choices=["local"], help=embeddings_help)
    parser.add_argument("--min-similarity", type=float, default=0.3, help="with --embeddings: its min_similarity")
    parser.add_argument("--exchanges", type=int, default=2400)
    questions_help = "the generated set's count (300), or with --locomo the first N of each conversation (all)"
    parser.add_argument("--questions", type=int, help=questions_help)
    parser.add_argument("--scale", default="10000,100000")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--big-file-mb", type=int, default=50)
    args = parser.parse_args()
    if args.locomo:
        await locomo(args)
        return
    corpus = build_corpus(args.exchanges, args.questions or 300, seed=args.seed)
    print(f"{len(corpus.exchanges)} exchanges over ten weeks, {len(corpus.questions)} questions ({load_average()})")
    with tempfile.TemporaryDirectory() as folder:
        tool, prompt, base = await coverage(corpus, Path(folder))
    print(f"evidence coverage: tool top 5 {tool:.3f}, prompt block ({BUDGET_TOKENS} tokens) {prompt:.3f}")
    print(f"                   plain BM25 over whole exchanges, top 5 {base:.3f}")
    for messages in (int(n) for n in args.scale.split(",")):
        with tempfile.TemporaryDirectory() as folder:
            found = await at_scale(corpus, messages, Path(folder))
        print(
            f"{found['messages']:,.0f} messages ({found['file_mb']:.0f} MB of session files): first indexing "
            f"{found['build_s']:.1f} s ({found['per_message_ms']:.3f} ms/message, event loop's longest stall "
            f"{found['stall_ms']:.1f} ms); saved one exchange at a time {found['incremental_ms']:.3f} ms/message; "
            f"query p50 {found['p50_ms']:.2f} ms, p95 {found['p95_ms']:.2f} ms; index {found['disk_mb']:.1f} MB "
            f"({found['disk_mb'] * 100_000 / found['messages']:.1f} MB per 100,000 messages) ({load_average()})"
        )
    with tempfile.TemporaryDirectory() as folder:
        took, stall, count = await big_file(Path(folder), args.big_file_mb)
    print(
        f"one {args.big_file_mb} MB session file ({count:,} messages) indexed in {took:.1f} s; the event loop's "
        f"longest stall meanwhile {stall:.1f} ms ({load_average()})"
    )


if __name__ == "__main__":
    asyncio.run(main())

"""The LoCoMo run: each conversation played and scored, its table printed; the figures gathered for JSON."""

from __future__ import annotations

import statistics
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

from locomo.conversation import load
from locomo.inspection import described
from locomo.model import Seen
from locomo.playback import play
from locomo.report import means, table
from locomo.scoring import Scored, score


def quantile(samples: list[float], share: float) -> float:
    """The sample below which `share` of them lie (nearest rank); 0 for none."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


async def run(
    folder: Path,
    conversations: int | None,
    questions: int | None,
    note: str,
    show: frozenset[str] = frozenset(),
    memory: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Play and score the first `conversations` of `folder` (all when None), asking the first `questions` of each
    (all when None), with `memory` as the config's memory section; print a table per conversation and overall,
    each followed by `note`, and what the model held for the questions tagged in `show`; the figures."""
    every: list[Scored] = []
    recall_cpu: list[float] = []
    figures: dict[str, Any] = {"conversations": {}}
    for conversation in load(folder)[:conversations]:
        with tempfile.TemporaryDirectory() as home:
            played = await play(conversation, Path(home), questions, memory)
        scored = score(conversation, played.seen, questions)
        every.extend(scored)
        recall_cpu.extend(played.recall_cpu)
        missing = [s.tag for s in scored if not s.answered]
        found = means(scored)
        title = f"conversation {conversation.name}, {len(conversation.exchanges)} exchanges"
        print("\n".join(table(title, found)))
        print(f"  played in {played.seconds:.1f} s; questions the model never saw answered: {missing or 'none'}")
        print(f"  ({note})\n")
        for question in conversation.questions:
            if question.tag in show:
                print("\n".join(described(conversation, question, played.seen.get(question.tag, Seen()))), "\n")
        each = {"questions_scored": [asdict(s) for s in scored], "seconds": played.seconds, "missing": missing}
        figures["conversations"][conversation.name] = found | each
    overall = figures["overall"] = means(every)
    print("\n".join(table(f"overall ({', '.join(figures['conversations'])})", overall)))
    floor = [s.bm25_cpu for s in every]
    cpu = figures["auto_recall_cpu_ms"] = {
        "turns": len(recall_cpu),
        "mean": statistics.mean(recall_cpu) * 1000 if recall_cpu else 0.0,
        "p95": quantile(recall_cpu, 0.95) * 1000,
        "plain_bm25_mean": statistics.mean(floor) * 1000 if floor else 0.0,
    }
    print(
        f"auto-recall CPU per question turn (its own steps and worker threads, {cpu['turns']} turns): mean "
        f"{cpu['mean']:.2f} ms, p95 {cpu['p95']:.2f} ms   target <= 2 ms {'met' if cpu['mean'] <= 2 else 'MISSED'}\n"
        f"  beside plain BM25's top 5 on the same history, this run: {cpu['plain_bm25_mean']:.2f} ms a question "
        f"(one FTS5 query, nothing around it)"
    )
    return figures

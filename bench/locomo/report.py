"""The figures of a LoCoMo run: their means per category, and a table of them with issue 46's targets beside."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass

from locomo.conversation import CATEGORIES
from locomo.scoring import COVERAGES, SIZES, Scored

Figures = dict[str, dict[str, float]]


@dataclass(frozen=True)
class Row:
    """One printed line: its label, the figure it shows, and the issue's targets for it, each a text and a test."""

    label: str
    figure: str
    targets: tuple[tuple[str, Callable[[Figures], bool]], ...] = ()


def means(scored: list[Scored]) -> Figures:
    """Each figure's mean over the questions, overall (`all`) and per category name; the share of recall's passages
    holding an earlier question; the largest auto-recall block; how many questions."""
    groups = {"all": scored} | {name: [s for s in scored if s.category == c] for c, name in CATEGORIES.items()}
    found = {
        figure: {group: statistics.mean(getattr(s, figure) for s in items) for group, items in groups.items() if items}
        for figure in (*COVERAGES, *SIZES)
    }
    found["restated"] = {
        group: sum(s.restated for s in items) / max(1, sum(s.passages for s in items))
        for group, items in groups.items()
        if items
    }
    found["recalled_tokens_most"] = {
        group: float(max(s.recalled_tokens for s in items)) for group, items in groups.items() if items
    }
    return found | {"questions": {group: float(len(items)) for group, items in groups.items()}}


def each_category(figures: Figures, figure: str) -> float:
    """The lowest of a figure over the categories that have questions."""
    return min(value for group, value in figures[figure].items() if group != "all")


ROWS = (
    Row(
        "tool: recall's five results",
        "tool",
        (
            (">= 0.75", lambda f: f["tool"]["all"] >= 0.75),
            ("each category >= 0.55", lambda f: each_category(f, "tool") >= 0.55),
        ),
    ),
    Row("  mean characters", "tool_chars", (("<= 8,000", lambda f: f["tool_chars"]["all"] <= 8000),)),
    Row("  over plain BM25 top 5", "tool-bm25", ((">= +0.10", lambda f: f["tool"]["all"] - f["bm25"]["all"] >= 0.10),)),
    Row("  passages holding an earlier question", "restated"),
    Row("plain BM25 top 5", "bm25"),
    Row("  mean characters", "bm25_chars"),
    Row("plain BM25 + neighbours", "bm25_neighbours"),
    Row("  mean characters", "bm25_neighbours_chars"),
    Row("prompt, before any tool", "prompt", ((">= 0.70", lambda f: f["prompt"]["all"] >= 0.70),)),
    Row("  mean tokens", "prompt_tokens", (("<= 24,000", lambda f: f["prompt_tokens"]["all"] <= 24000),)),
    Row("  auto-recall block tokens", "recalled_tokens"),
    Row(
        "  the largest block",
        "recalled_tokens_most",
        (("<= 1,500 (its budget)", lambda f: f["recalled_tokens_most"]["all"] <= 1500),),
    ),
    Row("prompt + tool", "prompt_tool", ((">= 0.85", lambda f: f["prompt_tool"]["all"] >= 0.85),)),
    Row("prompt + plain BM25 top 5", "prompt_bm25"),
    Row(
        "  prompt+tool over it",
        "prompt_tool-prompt_bm25",
        ((">= +0.05", lambda f: f["prompt_tool"]["all"] - f["prompt_bm25"]["all"] >= 0.05),),
    ),
)


def cell(figures: Figures, figure: str, group: str) -> str:
    """One figure of one group, printed: coverages to three places, differences signed, sizes whole; "-" for a
    category without questions."""
    if group not in figures["tool"]:
        return "-"
    if "-" in figure:
        first, second = figure.split("-")
        return f"{figures[first][group] - figures[second][group]:+.3f}"
    value = figures[figure][group]
    return f"{value:,.0f}" if figure in SIZES or figure == "recalled_tokens_most" else f"{value:.3f}"


def table(title: str, figures: Figures) -> list[str]:
    """The lines of one table: a row per figure, a column per category, the target and whether it is met."""
    groups = ["all", *CATEGORIES.values()]
    counts = ", ".join(f"{name} {figures['questions'][name]:.0f}" for name in CATEGORIES.values())
    lines = [f"{title}: {figures['questions']['all']:.0f} questions ({counts})"]
    lines.append(f"{'':38}" + "".join(f"{group:>12}" for group in groups) + "   target")
    for row in ROWS:
        cells = "".join(f"{cell(figures, row.figure, group):>12}" for group in groups)
        verdicts = "; ".join(f"{text} {'met' if met(figures) else 'MISSED'}" for text, met in row.targets)
        lines.append(f"{row.label:38}{cells}   {verdicts}".rstrip())
    return lines

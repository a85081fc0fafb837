"""MEMORY.md's facts: each ends with its source, `(from telegram:42, 2026-11-28)`; the file has a cap."""

from __future__ import annotations

import re

PROVENANCE = re.compile(r"\(from [^()\n]+, (\d{4}-\d\d-\d\d)\)\s*$")
_NOT_FACT = re.compile(r"^\s*(?:#|```|~~~|\|?[\s:|-]*$)")  # headings, fences, table rules and blank lines


def is_fact(line: str) -> bool:
    """Whether a MEMORY.md line states something (a bullet or a sentence), rather than shaping the file."""
    return not _NOT_FACT.match(line)


def provenance(source: str, day: str) -> str:
    """The suffix that records where a fact came from: the chat and the day."""
    return f"(from {source}, {day})"


def fact_day(line: str) -> str | None:
    """The day a fact's suffix names (YYYY-MM-DD), or None when it has none."""
    match = PROVENANCE.search(line)
    return match[1] if match else None


def with_provenance(old: str, new: str, source: str, day: str) -> str:
    """`new` with the suffix added to each fact that `old` does not have and that has no suffix of its own."""
    before = set(old.splitlines())
    suffix = provenance(source, day)
    lines = [
        f"{line.rstrip()} {suffix}" if line not in before and is_fact(line) and not PROVENANCE.search(line) else line
        for line in new.splitlines()
    ]
    return "\n".join(lines)


def fit_under(text: str, cap: int) -> tuple[str, list[str]]:
    """`text` cut to at most `cap` characters by taking out whole facts, oldest first; also the facts taken out.

    Facts without a day are taken first (they predate the suffixes), then by day, then from the top; lines
    that are not facts go last, from the bottom, only when the facts alone cannot make room.
    """
    if len(text) <= cap:
        return text, []
    lines = text.splitlines()
    facts = [i for i, line in enumerate(lines) if is_fact(line)]
    facts.sort(key=lambda i: (fact_day(lines[i]) or "", i))
    is_listed = set(facts)
    others = [i for i in reversed(range(len(lines))) if i not in is_listed and lines[i].strip()]
    size = len(text)
    taken: set[int] = set()
    for i in [*facts, *others]:
        if size <= cap:
            break
        taken.add(i)
        size -= len(lines[i]) + 1
    kept = "\n".join(line for i, line in enumerate(lines) if i not in taken)
    return kept[:cap], [lines[i].strip() for i in sorted(taken) if lines[i].strip()]

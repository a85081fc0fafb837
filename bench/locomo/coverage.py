"""Evidence coverage, as MEMORY_EVAL.md defines it: a line is covered by a text when any 6 consecutive words of
it appear in the text (lower-cased, words = [a-z0-9]+), or the whole line when it is shorter than 6 words."""

from __future__ import annotations

import re
from collections.abc import Iterable

RUN = 6
_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    """The text's words, lower-cased."""
    return _WORD.findall(text.lower())


class Covering:
    """One text, read once, asked which lines it covers."""

    def __init__(self, text: str) -> None:
        found = words(text)
        self._runs = {tuple(found[i : i + RUN]) for i in range(len(found) - RUN + 1)}
        self._joined = f" {' '.join(found)} "

    def covers(self, line: str) -> bool:
        """Whether any 6 consecutive words of `line` appear in the text (all of them, for a shorter line)."""
        said = words(line)
        if len(said) < RUN:
            return f" {' '.join(said)} " in self._joined
        return any(tuple(said[i : i + RUN]) in self._runs for i in range(len(said) - RUN + 1))

    def share(self, lines: Iterable[str]) -> float:
        """The share of `lines` covered; 0 for none."""
        told = list(lines)
        return sum(self.covers(line) for line in told) / len(told) if told else 0.0


def coverage(text: str, lines: Iterable[str]) -> float:
    """The share of `lines` that `text` covers."""
    return Covering(text).share(lines)

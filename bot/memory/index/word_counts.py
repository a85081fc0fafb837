"""How many passages of a scope hold each word (with its forms and synonyms, or alone): what its rarity is read from.
Counting a frequent word costs the most of a search, and rarity barely moves while the scope grows, so counts are
kept a while."""

from __future__ import annotations

from collections.abc import Sequence

from bot.memory.index.protocols import PassageIndex
from bot.memory.index.query import concept_expression

KEPT_WORDS = 4096  # words whose counts one scope keeps; past that they are all counted afresh
GROWTH = 0.1  # counts are kept until the scope has grown (or shrunk) by this share of its passages


class WordCounts:
    """Counts of one scope's words, kept between its searches (their caller serialises them)."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}
        self._total = 0  # the scope's size when they were counted
        self._last = 0  # its size at the last count

    @property
    def total(self) -> int:
        """About how many passages the scope held when last counted."""
        return self._last

    def __getitem__(self, word: str) -> int:
        return self._counts[word]

    def count(self, index: PassageIndex, words: Sequence[str]) -> int:
        """Count the passages holding each word not counted yet (one statement); about how many passages there are.
        All counts are dropped when the scope's size moved by more than GROWTH, or too many words are kept."""
        missing = [word for word in dict.fromkeys(words) if word not in self._counts]
        matching, total = index.matching([_expression(word) for word in missing])
        if abs(total - self._total) > GROWTH * self._total or len(self._counts) > KEPT_WORDS:
            self._counts.clear()
            self._total = total
            if len(missing) < len(set(words)):
                return self.count(index, words)
        self._counts.update(zip(missing, matching, strict=True))
        self._last = total
        return total


def narrow(word: str) -> str:
    """The key a word alone is counted under (no forms or synonyms), beside the same word with them."""
    return f'"{word}"'


def _expression(key: str) -> str:
    return key if key.startswith('"') else concept_expression(key)

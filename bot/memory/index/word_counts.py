"""How many passages of a scope hold each word (with its forms and synonyms): what its rarity is read from."""

from __future__ import annotations

from collections.abc import Sequence

from bot.memory.index.protocols import PassageIndex
from bot.memory.index.query import concept_expression


def word_counts(index: PassageIndex, words: Sequence[str], counts: dict[str, int]) -> int:
    """Count the passages holding each word that `counts` lacks, into it (one statement, each word counted once per
    search); about how many passages there are."""
    missing = [word for word in dict.fromkeys(words) if word not in counts]
    matching, total = index.matching([concept_expression(word) for word in missing])
    counts.update(zip(missing, matching, strict=True))
    return total

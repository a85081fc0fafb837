"""A second search for questions that span several conversations: the names and rarest words of the first hits
(and of the history entries among them, which name the people and things of a whole conversation) searched
again beside the question's own words, so a passage that answers through another one is found too."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from bot.memory.index.protocols import PassageIndex
from bot.memory.index.query import STOP_WORDS, Query
from bot.memory.index.word_counts import WordCounts

FED_BACK = 3  # first hits whose words are searched again
ADDED = 4  # words added to the question at most
LEAD_SHARE = 0.01  # a word in more of the scope's passages leads nowhere in particular (and costs the most)
LEAD_FLOOR = 20  # ... unless it is in fewer passages than this
LOOKED_AT = 6  # words of the first hits weighed for that (each costs a count)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][^\W_]{2,})", re.UNICODE | re.MULTILINE)


def candidates(texts: Sequence[str], query: Query) -> list[str]:
    """The words of the first hits that might lead on: names first, then the other content words, each once, none
    of the question's own."""
    asked = set(query.words)
    names: dict[str, None] = {}
    others: dict[str, None] = {}
    for text in texts:
        for name in _NAME.findall(text):
            word = name.lower()
            if word not in asked and word not in STOP_WORDS:
                names[word] = None
        for word in _WORD.findall(text.lower()):
            if len(word) > 3 and word.isalpha() and word not in asked and word not in STOP_WORDS:
                others[word] = None
    return [*names, *(word for word in others if word not in names)][:LOOKED_AT]


def expanded(index: PassageIndex, query: Query, texts: Sequence[str], counts: WordCounts) -> Query | None:
    """The question with the rarest words of the first hits added (the rarest in the scope that more than one
    passage holds: a word only the hit has leads nowhere); None when nothing is worth a second search. `counts`
    keeps how many passages hold each word looked at."""
    words = candidates(texts, query)
    if not words:
        return None
    total = counts.count(index, words)
    most = max(LEAD_FLOOR, int(LEAD_SHARE * total))
    leads = sorted((counts[word], n, word) for n, word in enumerate(words) if 1 < counts[word] <= most)
    added = tuple(word for _, _, word in leads[:ADDED])
    if not added:
        return None
    return replace(query, words=(*query.words, *added))

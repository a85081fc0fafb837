"""Telling a passage that only restates the question (the same question asked before, in nearly the same words, or
an earlier question whose reply says nothing of this one) from one that adds something: neither holds an answer, so
it ranks below the passages that do."""

from __future__ import annotations

import re
from functools import lru_cache

from bot.memory.index.query import STOP_WORDS
from bot.memory.index.wording import root

RESTATED_SHARE = 0.75  # of the content words of each question among the other's: nearly the same question
RESTATED_WEIGHT = 0.1  # what a restatement (or, for the recall tool, an echo) keeps of its score
QUESTION_CHARS = 400  # a longer message is more than a question
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_SENTENCE_END = re.compile(r"[.!?]\s")


@lru_cache(maxsize=1024)
def content_roots(text: str) -> frozenset[str]:
    """The roots of a text's content words (stop words left out)."""
    return frozenset(root(word) for word in _WORD.findall(text.lower()) if word not in STOP_WORDS)


def restates(asked: str, question: frozenset[str]) -> bool:
    """Whether a message (the user's side of an exchange) is a question in nearly the words of this one (by their
    roots): a statement in the question's words is what the question looks for, and stays."""
    return restated(asked_roots(asked), question)


def asked_roots(asked: str) -> frozenset[str]:
    """The content roots of a message that reads as a question (what `restated` compares); none for any other."""
    if "?" not in asked[-80:] or len(asked) > QUESTION_CHARS:
        return frozenset()
    return content_roots(asked)


def restated(mine: frozenset[str], question: frozenset[str]) -> bool:
    """Whether a question's roots (`asked_roots`) are nearly those of this one."""
    return bool(mine) and len(mine & question) >= RESTATED_SHARE * max(len(mine), len(question))


def echoes(asked: str, answered: str, question: frozenset[str]) -> bool:
    """Whether an exchange is an earlier question (one sentence asking) whose reply holds none of this question's
    words: it met the question only on the asking side, which holds no answer."""
    end = asked.rfind("?")
    if end < 0 or len(asked) > QUESTION_CHARS or _SENTENCE_END.search(asked, 0, end):
        return False
    return not content_roots(answered) & question


def question_roots(words: tuple[str, ...]) -> frozenset[str]:
    """The roots of the question's words."""
    return frozenset(root(word) for word in words)

"""Each question scored: evidence coverage of what the model held (recall's result, the prompt, both) and of the
plain-BM25 comparators on the same history, with the sizes beside them."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from bot.llm.tokens import CHARS_PER_TOKEN, estimate_each
from bot.memory.index.passages import RECALL_HEADING
from bot.memory.index.rendering import RECALL_END
from locomo.bm25 import PlainBM25, with_neighbours
from locomo.conversation import Conversation, Exchange, Question
from locomo.coverage import coverage
from locomo.model import Seen, text_of

PASSAGE = re.compile(r"^\d+\. ", re.MULTILINE)  # how the recall tool numbers its passages
TAG = re.compile(r"\[q[\w-]+-\d+\]")  # a question's tag: the passage is an earlier question
COVERAGES = ("tool", "prompt", "prompt_tool", "bm25", "bm25_neighbours", "prompt_bm25")
SIZES = ("tool_chars", "bm25_chars", "bm25_neighbours_chars", "prompt_tokens", "recalled_tokens")


@dataclass(frozen=True)
class Scored:
    """One question's figures: coverages (0-1) named as COVERAGES, sizes as SIZES."""

    tag: str
    category: int
    tool: float
    prompt: float
    prompt_tool: float
    bm25: float
    bm25_neighbours: float
    prompt_bm25: float
    tool_chars: int
    bm25_chars: int
    bm25_neighbours_chars: int
    prompt_tokens: int
    recalled_tokens: int
    passages: int  # in recall's result
    restated: int  # of them, those holding an earlier question of the chat
    answered: bool  # whether the model saw the question and the tool's result at all
    bm25_cpu: float = 0.0  # seconds of CPU plain BM25's search took: the floor auto-recall's cost is read against


def prompt_text(messages: list[dict[str, Any]]) -> str:
    """Everything the prompt shows the model: every message's text and the arguments of earlier tool calls."""
    parts = []
    for message in messages:
        parts.append(text_of(message.get("content")))
        parts.extend(str((call.get("function") or {}).get("arguments", "")) for call in message.get("tool_calls") or ())
    return "\n".join(parts)


def recalled_block(messages: list[dict[str, Any]]) -> str:
    """The auto-recalled block put before the new message, "" when there is none."""
    last = text_of(messages[-1].get("content")) if messages else ""
    start = last.find(f"[{RECALL_HEADING}")
    end = last.find(RECALL_END, start)
    return last[start : end + len(RECALL_END)] if start >= 0 and end >= 0 else ""


def exchange_text(exchange: Exchange) -> str:
    """An exchange as the comparator indexes it: the user's message and the reply."""
    return f"{exchange.asked}\n{exchange.answered}"


def score(conversation: Conversation, seen: dict[str, Seen], questions: int | None = None) -> list[Scored]:
    """Every question asked (the first `questions`, or all), scored against what the model saw and plain BM25 over
    the same history: the exchanges, then the earlier questions with their answers."""
    index = PlainBM25()
    for exchange in conversation.exchanges:
        index.add(exchange_text(exchange))
    scored = []
    for question in conversation.questions[:questions]:
        scored.append(score_one(conversation, question, seen.get(question.tag, Seen()), index))
        index.add(f"{question.asked}\n{question.answer}")
    return scored


def score_one(conversation: Conversation, question: Question, seen: Seen, index: PlainBM25) -> Scored:
    """One question's figures; `index` holds the history before it."""
    lines = [conversation.lines[dia_id].text for dia_id in question.evidence]
    prompt = prompt_text(seen.prompt)
    started = time.thread_time()
    hits = index.top(question.text)
    bm25_cpu = time.thread_time() - started
    bm25 = index.found(hits)
    around = index.found(with_neighbours(hits, len(index.texts)))
    return Scored(
        question.tag,
        question.category,
        tool=coverage(seen.found, lines),
        prompt=coverage(prompt, lines),
        prompt_tool=coverage(f"{prompt}\n{seen.found}", lines),
        bm25=coverage(bm25, lines),
        bm25_neighbours=coverage(around, lines),
        prompt_bm25=coverage(f"{prompt}\n{bm25}", lines),
        tool_chars=len(seen.found),
        bm25_chars=len(bm25),
        bm25_neighbours_chars=len(around),
        prompt_tokens=sum(estimate_each(seen.prompt)),
        recalled_tokens=len(recalled_block(seen.prompt)) // CHARS_PER_TOKEN,
        passages=len(passages := PASSAGE.split(seen.found)[1:]),
        restated=sum(bool(TAG.search(passage)) for passage in passages),
        answered=bool(seen.prompt and seen.found),
        bm25_cpu=bm25_cpu,
    )

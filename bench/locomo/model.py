"""The fake model of the LoCoMo bench: it speaks the other speaker's lines, consolidates with LoCoMo's own event
lists, and on a question notes what it was shown, calls `recall(query=<the question>)` and notes the result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot.memory.files import SAVE_MEMORY
from locomo.conversation import Conversation, Exchange, Question
from tests.fakes.openai_server import Reply, Text, ToolCalls, echo

QUIET = "Answered questions about earlier conversations."  # the summary of a chunk that holds no session's lines
MIN_MATCH = 20  # characters of a message before it is taken as a sign of its session in a consolidation excerpt


@dataclass
class Seen:
    """What the model was shown for one question: the whole prompt before any tool, then recall's result."""

    prompt: list[dict[str, Any]] = field(default_factory=list)
    found: str = ""


def text_of(content: Any) -> str:
    """A message content's text: a string, or the text parts of a list."""
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


class LocomoModel:
    """The fake model's answers for one conversation; `now` is the exchange or question being played (the gateway
    strips a message's outer whitespace, so an exchange is known by its stripped text)."""

    def __init__(self, conversation: Conversation) -> None:
        self._conversation = conversation
        self._signs = [
            (text, exchange.session)
            for exchange in conversation.exchanges
            for text in (exchange.asked, exchange.answered)
            if len(text) >= MIN_MATCH
        ]
        self.now: Exchange | Question | None = None
        self.seen: dict[str, Seen] = {}

    def __call__(self, body: dict[str, Any]) -> Reply:
        if any(tool["function"]["name"] == SAVE_MEMORY for tool in body.get("tools") or []):
            return self._summary(text_of(body["messages"][-1].get("content")))
        last = body["messages"][-1]
        now = self.now
        if (
            isinstance(now, Exchange)
            and last.get("role") == "user"
            and now.asked.strip() in text_of(last.get("content"))
        ):
            return Text(now.answered)
        if isinstance(now, Question):
            seen = self.seen.setdefault(now.tag, Seen())
            if last.get("role") == "tool":
                seen.found = text_of(last.get("content"))
                return Text(now.answer)
            if last.get("role") == "user" and now.asked in text_of(last.get("content")):
                seen.prompt = body["messages"]
                return ToolCalls((("recall", {"query": now.text}),))
        return echo(body)

    def _summary(self, excerpt: str) -> Reply:
        """save_memory with LoCoMo's event lists of the sessions whose lines the excerpt holds; MEMORY.md kept."""
        sessions = sorted({session for text, session in self._signs if text in excerpt})
        said = [self._conversation.events[s] for s in sessions if s in self._conversation.events]
        entry = " ".join(said) or QUIET
        return ToolCalls((("save_memory", {"history_entry": entry, "memory_update": ""}),))

"""Keeping a long turn inside the window: oldest tool results shortened, then oldest rounds summarised."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from typing import Any

from bot.agent.turn.tool_results import clip_text
from bot.hooks.handlers import Hooks
from bot.hooks.hook_events import AfterCompaction, BeforeCompaction
from bot.llm.tokens import CHARS_PER_TOKEN, estimate_each
from bot.llm.types import Provider
from bot.usage.charge import charged_to, current_charge

logger = logging.getLogger(__name__)

SHORT_RESULT_CHARS = 1_200  # what an old tool result keeps, head and tail, once the turn outgrows the window
SUMMARY_TOKENS = 1_024
MIN_TRANSCRIPT_CHARS = 2_000
SUMMARY_NOTE = "(My notes on the earlier steps of this turn, condensed to fit the context window.)"
SUMMARY_PROMPT = (
    "You condense an assistant's work in progress. Below are the user's request and the tool calls the assistant "
    "made so far, with their results. Write concise notes that keep every fact, number, name, URL, file path and "
    "finding needed to finish the task, and say what was already tried. No preamble."
)


def turn_start(messages: list[dict[str, Any]]) -> int | None:
    """Where the current turn begins: the last user message."""
    return next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "user"), None)


def tokens_of(messages: list[dict[str, Any]]) -> int:
    """The estimated tokens of these messages."""
    return sum(estimate_each(messages))


def round_starts(messages: list[dict[str, Any]], start: int) -> list[int]:
    """Where each round of the turn begins: every assistant message after the user's (its tool results follow it)."""
    return [i for i in range(start + 1, len(messages)) if messages[i].get("role") == "assistant"]


class TurnCompactor:
    """Shrinks the current turn of a request, in place, until it fits a token limit; the session keeps everything.

    Summarising rounds is a compaction: `before_compaction` and `after_compaction` hooks hear of it.
    """

    def __init__(self, provider: Provider, hooks: Hooks | None = None) -> None:
        self._provider = provider
        self._hooks = hooks

    async def fit(self, messages: list[dict[str, Any]], limit: int) -> None:
        """Fit the system prompt and current turn to `limit`; the latest round is cut last, no call loses its result."""
        start = turn_start(messages)
        if start is None or self._size(messages, start) <= limit:
            return
        rounds = round_starts(messages, start)
        latest = rounds[-1] if rounds else len(messages)
        if self._shorten(messages, start, limit, until=latest):
            return
        if any(m.get("role") == "tool" for m in messages[start + 1 : latest]):  # a lone earlier summary stays
            await self._summarise_hooked(messages, start, latest, limit)
        self._shorten(messages, start, limit, until=len(messages))

    def _size(self, messages: list[dict[str, Any]], start: int) -> int:
        head = messages[:1] if messages and messages[0].get("role") == "system" else []
        return tokens_of(head) + tokens_of(messages[start:])

    def _shorten(self, messages: list[dict[str, Any]], start: int, limit: int, until: int) -> bool:
        """Clip the turn's tool results before `until`, oldest first, until it fits; True once it does."""
        if self._size(messages, start) <= limit:
            return True
        for index in range(start + 1, until):
            message = messages[index]
            content = message.get("content")
            if message.get("role") != "tool" or not isinstance(content, str) or len(content) <= SHORT_RESULT_CHARS:
                continue
            # A new dict: the session may hold the same object, and it keeps the whole result.
            messages[index] = {**message, "content": clip_text(content, SHORT_RESULT_CHARS)}
            if self._size(messages, start) <= limit:
                return True
        return self._size(messages, start) <= limit

    async def _summarise_hooked(self, messages: list[dict[str, Any]], start: int, latest: int, limit: int) -> None:
        """`_summarise`, between the compaction hooks of the turn's chat (`ok` False when it failed); a call charged to
        no chat has no hooks to tell."""
        chat = current_charge().chat
        if self._hooks is None or chat is None:
            await self._summarise(messages, start, latest, limit)
            return
        folded, ok = latest - start - 1, False
        await self._hooks.run("before_compaction", BeforeCompaction(chat, folded))
        try:
            await self._summarise(messages, start, latest, limit)
            ok = True
        finally:
            await self._hooks.run("after_compaction", AfterCompaction(chat, folded, ok))

    async def _summarise(self, messages: list[dict[str, Any]], start: int, latest: int, limit: int) -> None:
        """Replace the rounds between the user's message and the latest round with one note written by the model."""
        request = messages[start].get("content")
        asked = request if isinstance(request, str) else json.dumps(request)
        room = max(MIN_TRANSCRIPT_CHARS, (limit - SUMMARY_TOKENS) * CHARS_PER_TOKEN - len(asked))
        transcript = clip_text("\n\n".join(_transcribed(m) for m in messages[start + 1 : latest]), room)
        prompt = [
            {"role": "system", "content": SUMMARY_PROMPT},
            {"role": "user", "content": f"The user's request:\n{asked}\n\nThe steps so far:\n{transcript}"},
        ]
        with charged_to(replace(current_charge(), purpose="compaction")):
            response = await self._provider.chat(prompt, None, None, max_tokens=SUMMARY_TOKENS)
        logger.info(
            "compacted a long turn: %d messages summarised in %d characters", latest - start - 1, len(response.content)
        )
        messages[start + 1 : latest] = [{"role": "assistant", "content": f"{SUMMARY_NOTE}\n{response.content.strip()}"}]


def _transcribed(message: dict[str, Any]) -> str:
    """One message of the turn as a line of the transcript the summariser reads."""
    if message.get("role") == "tool":
        return f"Result of {message.get('name', 'a tool')}: {message.get('content') or ''}"
    parts = [message["content"]] if message.get("content") else []
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        parts.append(f"Called {function.get('name')}({function.get('arguments') or ''})")
    return "\n".join(parts)

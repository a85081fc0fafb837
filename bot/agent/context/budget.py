"""The context budget: fitting every request into the model's window (whose size `bot.llm.context_window` finds)."""

from __future__ import annotations

import logging
import time
from bisect import bisect_right
from collections.abc import Callable
from itertools import accumulate
from typing import Any

from bot.agent.turn.compaction import TurnCompactor, tokens_of
from bot.errors import ContextOverflow, MessageTooLarge, PromptTooLarge
from bot.hooks.handlers import Hooks
from bot.llm.context_window import ContextWindow
from bot.llm.tokens import CHARS_PER_TOKEN, estimate_each, estimate_tokens, estimate_tool_tokens
from bot.llm.types import DeltaHandler, LLMResponse, Provider
from bot.storage.recent import RecentMap

logger = logging.getLogger(__name__)

CACHE_SECONDS = 300.0
OVERFLOW_SHRINK = 0.75
MIN_EXCHANGES = 6
MIN_REPLY_RESERVE = 1024
MEMORY_SHARE = 0.25
TOOL_LISTS_KEPT = 16  # tool definition lists measured lately (one per role and persona, most often)


def fit_history(messages: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """Drop the oldest history until the estimate fits `limit`; keep the system prompt, the current turn, tool pairs."""
    return counted_fit(messages, limit)[0]


def counted_fit(messages: list[dict[str, Any]], limit: int) -> tuple[list[dict[str, Any]], int]:
    """`fit_history`, and the estimated tokens of what it kept (each message estimated once)."""
    # The current turn starts at the last user message. History is cut only just before a user
    # message, so an assistant tool call is never separated from its results.
    current = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "user"), None)
    if current is None:
        return messages, tokens_of(messages)
    head = 0  # the system prompt, and a stateless call's own system messages after it
    while head < current and messages[head].get("role") == "system":
        head += 1
    fixed = tokens_of(messages[:head]) + tokens_of(messages[current:])
    room = limit - fixed
    # totals[k]: the tokens of the k + 1 messages before the current turn; as many of those as fit are kept
    totals = list(accumulate(estimate_each(reversed(messages[head:current]))))
    start = current - bisect_right(totals, room)
    while start < current and messages[start].get("role") != "user":
        start += 1
    kept = totals[current - start - 1] if start < current else 0
    if start == head:
        return messages, fixed + kept
    return messages[:head] + messages[start:], fixed + kept


def exchanges_in(messages: list[dict[str, Any]]) -> int:
    """How many earlier exchanges (user messages before the current one) a request carries."""
    return max(0, [m.get("role") for m in messages].count("user") - 1)


def tokens_for_recent(messages: list[dict[str, Any]], exchanges: int) -> int:
    """Estimated tokens of the system prompt, the last `exchanges` exchanges and the current turn."""
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    start = users[max(0, len(users) - 1 - exchanges)] if users else 0
    head = messages[:1] if messages and messages[0].get("role") == "system" else []
    return sum(estimate_each((*head, *messages[start:])))


class ContextBudget:
    """Input tokens a request may use: window - reply reserve - tool definitions, lowered for a while after an
    overflow; the reserve shrinks (never below 1,024) before history falls under the last 6 exchanges."""

    def __init__(self, window: ContextWindow, max_tokens: int, clock: Callable[[], float] = time.monotonic) -> None:
        self._window = window
        self._max_tokens = max_tokens
        self._clock = clock
        self._ceiling: tuple[int, float] | None = None
        self._tool_sizes: RecentMap[int, tuple[list[dict[str, Any]], int]] = RecentMap(TOOL_LISTS_KEPT)
        self.cramped: str | None = None  # set once history had to be cut below the last 6 exchanges

    async def input_limit(self, tools: list[dict[str, Any]] | None, reserve: int | None = None) -> int:
        """Tokens left for the messages of a request that carries these tools and keeps `reserve` for the reply."""
        limit = await self._window.size() - (self._max_tokens if reserve is None else reserve)
        if self._ceiling and self._clock() < self._ceiling[1]:
            limit = min(limit, self._ceiling[0])
        return limit - self.tools_size(tools)

    async def fit(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> tuple[list[dict[str, Any]], int | None]:
        """The messages that fit, and a smaller reply reserve when the recent exchanges or the current turn need it."""
        fitted, reserve, tokens = await self._fit(messages, tools)
        room = await self._window.size() - tokens - self.tools_size(tools)
        if room < (reserve or self._max_tokens):
            reserve = max(self.smallest_reserve(), room)
        return fitted, reserve if reserve is not None and reserve < self._max_tokens else None

    async def _fit(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> tuple[list[dict[str, Any]], int | None, int]:
        fitted, tokens = counted_fit(messages, await self.input_limit(tools))
        if fitted is messages:
            return fitted, None, tokens
        wanted = min(MIN_EXCHANGES, exchanges_in(messages))
        if exchanges_in(fitted) >= wanted:
            return fitted, None, tokens
        window = await self._window.size()
        needed = tokens_for_recent(messages, wanted) + self.tools_size(tools)
        reserve = min(self._max_tokens, max(MIN_REPLY_RESERVE, window - needed))
        fitted, tokens = counted_fit(messages, await self.input_limit(tools, reserve))
        if exchanges_in(fitted) < wanted:
            self._warn_cramped(window, exchanges_in(fitted), wanted)
        return fitted, reserve if reserve < self._max_tokens else None, tokens

    def smallest_reserve(self) -> int:
        """The least room a reply is left: 1,024 tokens, or llm.max_tokens when that is lower."""
        return min(self._max_tokens, MIN_REPLY_RESERVE)

    async def turn_limit(self, tools: list[dict[str, Any]] | None) -> int:
        """Tokens the system prompt and the current turn may use before the turn is compacted."""
        return await self.input_limit(tools, self.smallest_reserve())

    async def check_prompt(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> None:
        """Raise PromptTooLarge, without calling the model, when the system prompt and tools alone exceed the window."""
        window = await self._window.size()
        if _system_tokens(messages) + self.tools_size(tools) > window:
            raise self.prompt_too_large(messages, tools, f"the prompt does not fit a {window}-token window")

    def too_large(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, reason: str
    ) -> ContextOverflow:
        """The error for a request of one message that overflowed: the message, unless our own prompt is larger."""
        message = tokens_of([m for m in messages if m.get("role") != "system"])
        if message < _system_tokens(messages) + self.tools_size(tools):
            return self.prompt_too_large(messages, tools, reason, refused=True)
        return MessageTooLarge(reason)

    def prompt_too_large(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, reason: str, refused: bool = False
    ) -> PromptTooLarge:
        """PromptTooLarge, with a WARNING telling the owner what does not fit and which key to set; `refused` when
        the server refused it though the window we know would hold it (so the window we know is wrong)."""
        if refused:
            logger.warning(
                "the model server refused the request as too long for its context window, although %s %s tokens: "
                "relaybot's own system prompt (about %s tokens) and tool definitions (about %s tokens) are the larger "
                "part, so every message fails. Set llm.context_window to the window the server really has (a "
                "local server's context size, e.g. llama.cpp's --ctx-size or vLLM's --max-model-len), or give it a "
                "larger one",
                "the config (llm.context_window) claims" if self._window.configured else "relaybot took the window as",
                f"{self._window.last_known():,}",
                f"{_system_tokens(messages):,}",
                f"{self.tools_size(tools):,}",
            )
            return PromptTooLarge(reason)
        logger.warning(
            "the model's context window (%s tokens, llm.context_window) cannot hold relaybot's own system prompt "
            "(about %s tokens) and tool definitions (about %s tokens) with room for a message and a reply: every "
            "message fails. Set llm.context_window to the model's real window, or use a model with a larger one "
            "(or fewer tools)",
            f"{self._window.last_known():,}",
            f"{_system_tokens(messages):,}",
            f"{self.tools_size(tools):,}",
        )
        return PromptTooLarge(reason)

    def memory_chars(self) -> int:
        """How many characters of MEMORY.md the system prompt may carry: a quarter of the window."""
        return int(self._window.last_known() * MEMORY_SHARE * CHARS_PER_TOKEN)

    def _warn_cramped(self, window: int, kept: int, wanted: int) -> None:
        if self.cramped is None:
            self.cramped = (
                f"the context window ({window:,} tokens) leaves room for only {kept} of the last {wanted} exchanges; "
                "set llm.context_window to the model's real window (or lower llm.max_tokens)"
            )
            logger.warning("history cut short: %s", self.cramped)

    def tools_size(self, tools: list[dict[str, Any]] | None) -> int:
        """Estimated tokens of the tool definitions; measured once per definitions list."""
        if not tools:
            return 0
        entry = self._tool_sizes.get(id(tools))
        if entry is None or entry[0] is not tools:
            entry = (tools, estimate_tool_tokens(tools))
            self._tool_sizes[id(tools)] = entry
        return entry[1]

    def overflowed(self, sent_tokens: int) -> None:
        """The model refused about `sent_tokens` of input: rediscover the window and stay well below that."""
        self._window.forget()
        self._ceiling = (int(sent_tokens * OVERFLOW_SHRINK), self._clock() + CACHE_SECONDS)


class BudgetedProvider:
    """A Provider that trims each request's history to the budget, and after an overflow shrinks it and retries once."""

    def __init__(self, provider: Provider, budget: ContextBudget, hooks: Hooks | None = None) -> None:
        self.model = provider.model
        self._provider = provider
        self._budget = budget
        self._compactor = TurnCompactor(provider, hooks)

    async def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        on_delta: DeltaHandler | None = None,
        max_tokens: int | None = None,
    ) -> LLMResponse:
        """Answer like the wrapped provider, compacting an outgrown current turn in `messages` itself (done once).

        A second overflow propagates: MessageTooLarge, or PromptTooLarge when our own prompt is the larger part.
        """
        await self._budget.check_prompt(messages, tools)
        await self._compactor.fit(messages, await self._budget.turn_limit(tools))
        fitted, reserve = await self._budget.fit(messages, tools)
        caps = [cap for cap in (max_tokens, reserve) if cap is not None]
        cap = min(caps) if caps else None
        try:
            return await self._call(fitted, tools, on_delta, cap)
        except ContextOverflow as exc:
            if _only_one_message(fitted):
                raise self._budget.too_large(fitted, tools, str(exc)) from exc
            sent = tokens_of(fitted) + self._budget.tools_size(tools)
            self._budget.overflowed(sent)
            await self._compactor.fit(messages, await self._budget.turn_limit(tools))
            retry, reserve = await self._budget.fit(messages, tools)
            if tokens_of(retry) >= tokens_of(fitted):
                raise  # nothing left to drop: the same request would overflow again
            logger.warning(
                "context overflow at about %d tokens; retrying with %d of %d messages", sent, len(retry), len(messages)
            )
        caps = [cap for cap in (max_tokens, reserve) if cap is not None]
        try:
            return await self._call(retry, tools, on_delta, min(caps) if caps else None)
        except ContextOverflow as exc:
            if _only_one_message(retry):
                raise self._budget.too_large(retry, tools, str(exc)) from exc
            raise

    async def _call(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        on_delta: DeltaHandler | None,
        max_tokens: int | None,
    ) -> LLMResponse:
        """The wrapped provider's answer, passing `max_tokens` only when there is a cap."""
        if max_tokens is not None:
            return await self._provider.chat(messages, tools, on_delta, max_tokens=max_tokens)
        return await self._provider.chat(messages, tools, on_delta)


def _system_tokens(messages: list[dict[str, Any]]) -> int:
    """Estimated tokens of the request's system prompt."""
    return estimate_tokens(messages[0]) if messages and messages[0].get("role") == "system" else 0


def _only_one_message(messages: list[dict[str, Any]]) -> bool:
    """True when a request is the system prompt and the user's message alone: no history left to drop."""
    rest = [m for m in messages if m.get("role") != "system"]
    return len(rest) == 1 and rest[0].get("role") == "user"

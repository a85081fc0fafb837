"""The model provider: chat and stream with one rule set (retries, timeouts, errors, cost) over either transport.

The transport is litellm, or for `openai/…` models with `llm.fast_path` the direct OpenAI-compatible client
(`bot.llm.transports.openai_http`); each reads its own failures as evidence for `bot.llm.failures`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from bot.config.schema import LLMConfig
from bot.errors import MissingApiKey, ProviderError
from bot.llm.cache_breakpoints import mark_cache_breakpoints, takes_cache_breakpoints
from bot.llm.failures import Evidence, StreamCut, classify, retry_delay, to_provider_error
from bot.llm.idle_timeout import IdleTimeout
from bot.llm.model_params import request_params
from bot.llm.prices import call_cost, price_table
from bot.llm.reasoning import ThinkFilter, ignore, reasoning_handler, reasoning_of, strip_think, think_text
from bot.llm.stream_chunks import usage_of
from bot.llm.stream_fold import StreamFold
from bot.llm.transports import litellm as litellm_transport
from bot.llm.transports import openai_http
from bot.llm.transports.litellm_loader import import_litellm
from bot.llm.types import (
    CUT_NOTE,
    LENGTH_NOTE,
    DeltaHandler,
    LLMResponse,
    ToolCall,
    Usage,
    parsed_call,
)
from bot.retry import RetryPolicy

logger = logging.getLogger(__name__)

_MESSAGE_KEYS = frozenset({"role", "content", "tool_calls", "tool_call_id", "name"})

LENGTH_CUT_CALL = (
    "your reply was cut at the max_tokens limit while this call was being written, so it was not run; "
    "do it in smaller steps"
)


class StreamRefused(Exception):
    """litellm answered a streamed call with nothing: it retried a 422 and gave up without raising."""


def sanitize_messages(messages: list[dict[str, Any]], copy: bool = True) -> list[dict[str, Any]]:
    """Keep only the standard chat keys, so stored extras never reach the provider; with `copy` False a message
    that has no other keys is passed as it is (for a transport that never changes the messages it sends)."""
    if copy:
        return [{k: v for k, v in m.items() if k in _MESSAGE_KEYS} for m in messages]
    return [m if m.keys() <= _MESSAGE_KEYS else {k: v for k, v in m.items() if k in _MESSAGE_KEYS} for m in messages]


class ModelProvider:
    """Chat and stream over either transport, with retries, idle timeouts on streams and our error tree."""

    def __init__(self, config: LLMConfig, retry: RetryPolicy | None = None) -> None:
        self.model = config.model
        self._config = config
        self._retry = retry or RetryPolicy(attempts=4, base_delay=1.0, max_delay=30.0)
        self._fast = openai_http.fast_path_for(config)
        self._litellm: Any = None
        self._api_key, self._missing_keys = openai_http.openai_key(config) if self._fast else (None, [])
        self._evidence: Callable[[BaseException], Evidence] = (
            openai_http.failure_evidence if self._fast else litellm_transport.failure_evidence
        )
        self._streams = True  # False once the endpoint refused a streamed call that it answered unstreamed

    async def warm_up(self) -> None:
        """Load what the first call needs (litellm unless on the fast path, the price table) off the event loop."""
        if self._fast is not None:
            await self._fast.warm_up()
        elif self._litellm is None:
            litellm = await asyncio.to_thread(import_litellm)
            self._api_key, self._missing_keys = litellm_transport.resolve_key(litellm, self._config)
            self._litellm = litellm
        await asyncio.to_thread(price_table)

    async def aclose(self) -> None:
        """Close the fast path's pooled connections."""
        if self._fast is not None:
            await self._fast.aclose()

    async def _acompletion(self, **request: Any) -> Any:
        if self._fast is not None:
            return await self._fast.acompletion(**request)
        return litellm_transport.answered(await self._litellm.acompletion(**request))

    async def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        on_delta: DeltaHandler | None = None,
        max_tokens: int | None = None,
    ) -> LLMResponse:
        """Answer a conversation; stream visible text to `on_delta` when given; `max_tokens` lowers the reply cap."""
        if self._fast is None and self._litellm is None:
            await self.warm_up()
        if self._missing_keys:
            logger.error("llm %s has no API key: set %s or llm.api_key", self.model, " or ".join(self._missing_keys))
            raise MissingApiKey(self._missing_keys)
        request = self._request(messages, tools)
        if max_tokens is not None:
            request["max_tokens"] = max_tokens
        shown = False

        def show(text: str) -> None:
            nonlocal shown
            shown = True
            assert on_delta is not None
            on_delta(text)

        async def attempt() -> LLMResponse:
            if on_delta is None:
                return await self._complete(request)
            reasoning = reasoning_handler(on_delta)
            if not self._streams:
                return await self._complete(request, show, reasoning)
            try:
                return await self._stream(request, show, reasoning)
            except Exception as exc:
                if shown or not self._refused(exc):
                    raise
            response = await self._complete(request, show, reasoning)
            logger.warning("llm %s refused a streamed call; its replies are no longer streamed", self.model)
            self._streams = False
            return response

        tries = 0

        def decide(exc: BaseException, attempt: int) -> float | None:
            nonlocal tries
            tries = attempt
            if shown or isinstance(exc, ProviderError):
                return None  # text already reached the user: a second answer would contradict it
            return retry_delay(classify(self._evidence(exc)), attempt, self._retry)

        try:
            response = await self._retry.run(attempt, f"llm call to {self.model}", (Exception,), decide)
        except ProviderError:
            raise
        except Exception as exc:
            raise to_provider_error(classify(self._evidence(exc)), exc, self.model, shown, tries) from exc
        return priced(response, self.model)

    def _refused(self, exc: BaseException) -> bool:
        """Whether the endpoint refused the request outright (400/422, not an overflow): maybe the streaming."""
        if isinstance(exc, StreamRefused):
            return True
        evidence = self._evidence(exc)
        return evidence.status in (400, 422) and not evidence.overflow

    def _request(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        config = self._config
        request: dict[str, Any] = {
            "model": config.model,
            "messages": sanitize_messages(messages, copy=self._fast is None),  # litellm may change what it gets
            **request_params(config),
            "timeout": config.timeout,
            "num_retries": 0,
            "max_retries": 0,
        }
        if self._api_key:
            request["api_key"] = self._api_key
        if config.api_base:
            request["api_base"] = config.api_base
        if tools:
            request["tools"] = tools
        return mark_cache_breakpoints(request) if takes_cache_breakpoints(config.model) else request

    async def _complete(
        self, request: dict[str, Any], emit: DeltaHandler | None = None, reasoning: DeltaHandler = ignore
    ) -> LLMResponse:
        """One unstreamed answer within `llm.timeout`; with `emit`, its text is shown (and its reasoning) at once."""
        started = time.perf_counter()
        async with asyncio.timeout(self._config.timeout):
            response = await self._acompletion(**request)
        choice = response.choices[0]
        message = choice.message
        if emit is not None:
            if thought := reasoning_of(message):
                reasoning(thought)
            visible = ThinkFilter(emit, reasoning)
            visible.feed(message.content or "")
            visible.flush()
        calls = tuple(
            parsed_call(call.id, call.function.name, call.function.arguments or "")
            for call in (message.tool_calls or [])
        )
        usage = usage_of(getattr(response, "usage", None))
        logger.debug("llm answered in %.1f ms", (time.perf_counter() - started) * 1000)
        content = strip_think(message.content or "")
        thought = "\n\n".join(part for part in (reasoning_of(message), think_text(message.content or "")) if part)
        answer = self._finished(content, calls, choice.finish_reason or "stop", usage, emit if content else None)
        return replace(answer, reasoning=thought) if thought else answer

    async def _stream(self, request: dict[str, Any], emit: DeltaHandler, reasoning: DeltaHandler) -> LLMResponse:
        """Stream one answer; `llm.timeout` bounds the wait for the first chunk and between chunks, not the whole."""
        shown = False

        def show(text: str) -> None:
            nonlocal shown
            shown = True
            emit(text)

        thoughts: list[str] = []

        def think(text: str) -> None:
            thoughts.append(text)
            reasoning(text)

        fold = StreamFold(show, think)
        async with IdleTimeout(self._config.timeout) as idle:
            stream = await self._acompletion(**request, stream=True, stream_options={"include_usage": True})
            if stream is None:
                raise StreamRefused(f"{self.model} returned no stream")
            if isinstance(stream, openai_http.SSEStream):
                async for batch in stream.batches():  # the chunks of one read: their text is shown in one piece
                    idle.touch()
                    fold.wire(batch)
            else:
                async for chunk in stream:
                    idle.touch()
                    fold.litellm(chunk)
        fold.flush()
        content = strip_think(fold.text())
        # litellm reports finish_reason "stop" for a stream cut short; only the wrapper knows none arrived.
        if getattr(stream, "received_finish_reason", fold.finish_reason) is None:
            if not shown:
                raise StreamCut(f"the stream from {self.model} ended without a finish reason")
            logger.warning(
                "llm stream from %s ended without a finish reason after %d characters; kept as incomplete",
                self.model,
                len(content),
            )
            emit(f"\n\n{CUT_NOTE}")
            return LLMResponse(f"{content}\n\n{CUT_NOTE}", (), "cut", fold.usage, "".join(thoughts))
        answer = self._finished(content, fold.calls(), fold.finish_reason, fold.usage, emit if shown else None)
        return replace(answer, reasoning="".join(thoughts)) if thoughts else answer

    def _finished(
        self,
        content: str,
        calls: tuple[ToolCall, ...],
        finish_reason: str,
        usage: Usage,
        emit: DeltaHandler | None = None,
    ) -> LLMResponse:
        """The response as the user sees it: a reply cut at max_tokens says so, and its tool calls are unusable."""
        if finish_reason != "length":
            return LLMResponse(content, calls, finish_reason, usage)
        logger.warning("llm %s stopped at llm.max_tokens (%d)", self.model, self._config.max_tokens)
        calls = tuple(replace(call, arguments_error=LENGTH_CUT_CALL) for call in calls)
        if content or not calls:
            separator = "\n\n" if content else ""
            if emit is not None:
                emit(separator + LENGTH_NOTE)
            content = content + separator + LENGTH_NOTE
        return LLMResponse(content, calls, finish_reason, usage)


def priced(response: LLMResponse, model: str) -> LLMResponse:
    """The response with its usage's cost filled in from the model's price per token."""
    usage = response.usage
    cost = call_cost(model, usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens)
    return response if not cost else replace(response, usage=replace(usage, cost=cost))

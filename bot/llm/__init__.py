"""The LLM provider: one protocol, one litellm-backed implementation."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from bot.config.schema import LLMConfig
from bot.errors import MissingApiKey, ProviderError
from bot.llm.failures import StreamCut, classify, retry_delay, to_provider_error
from bot.llm.openai_http import fast_path_for, openai_key
from bot.llm.prices import call_cost
from bot.llm.prompt_cache import mark_cache_breakpoints, takes_cache_breakpoints
from bot.retry import RetryPolicy

logger = logging.getLogger(__name__)

_MESSAGE_KEYS = frozenset({"role", "content", "tool_calls", "tool_call_id", "name"})
_THINK_BLOCK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL)

CUT_NOTE = "(the reply was cut off)"
LENGTH_NOTE = "(cut at the max_tokens limit)"
LENGTH_CUT_CALL = (
    "your reply was cut at the max_tokens limit while this call was being written, so it was not run; "
    "do it in smaller steps"
)
PLACEHOLDER_KEY = "no-key"

DeltaHandler = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call requested by the model; `arguments_error` is set when they are unusable."""

    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str = ""
    arguments_error: str | None = None

    def as_message_part(self) -> dict[str, Any]:
        """The OpenAI wire form, as stored in an assistant message."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.raw_arguments or "{}"},
        }


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens of one call, and its cost in USD computed once from them (0.0 when the model has no price)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost: float = 0.0


@dataclass(frozen=True, slots=True)
class LLMResponse:
    """What the model answered: text, tool calls, or both.

    `finish_reason` is the provider's ("stop", "tool_calls", "length": cut at max_tokens, its tool calls marked
    unusable) or "cut": the stream ended without one after text was shown, and `content` ends with a note saying so.
    """

    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str = "stop"
    usage: Usage = field(default_factory=Usage)

    @property
    def incomplete(self) -> bool:
        """True when the reply was cut short (at max_tokens, or by a broken stream)."""
        return self.finish_reason in ("length", "cut")


class Provider(Protocol):
    """Anything that can answer a chat completion request."""

    model: str

    async def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        on_delta: DeltaHandler | None = None,
        max_tokens: int | None = None,
    ) -> LLMResponse: ...


@runtime_checkable
class Warmable(Protocol):
    """A provider that can load its heavy parts in the background and release its connections."""

    async def warm_up(self) -> None: ...

    async def aclose(self) -> None: ...


def parse_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """Parse tool-call arguments, repairing broken JSON; return (arguments, error)."""
    if not raw.strip():
        return {}, None
    import json_repair

    try:
        value = json_repair.loads(raw)
    except Exception as exc:  # json_repair raises assorted errors on hopeless input
        return {}, f"arguments are not valid JSON ({type(exc).__name__})"
    if not isinstance(value, dict):
        return {}, "arguments must be a JSON object"
    return value, None


def strip_think(text: str) -> str:
    """Remove `<think>…</think>` reasoning blocks (an unclosed one runs to the end)."""
    return _THINK_BLOCK.sub("", text).strip() if "<think>" in text else text


@runtime_checkable
class ReasoningSink(Protocol):
    """A delta handler that also takes the model's reasoning (reasoning_content, `<think>` blocks)."""

    def __call__(self, text: str) -> None: ...

    def reasoning(self, text: str) -> None: ...


def _ignore(text: str) -> None:
    """Reasoning nobody asked for."""


class ThinkFilter:
    """Streams text through, passing whatever sits inside `<think>…</think>` to `hidden` instead."""

    def __init__(self, emit: DeltaHandler, hidden: DeltaHandler = _ignore) -> None:
        self._emit = emit
        self._hidden = hidden
        self._pending = ""
        self._inside = False

    def feed(self, chunk: str) -> None:
        """Take a chunk; emit the part that is certainly visible."""
        self._pending += chunk
        while self._pending:
            tag = "</think>" if self._inside else "<think>"
            index = self._pending.find(tag)
            if index >= 0:
                if index:
                    (self._hidden if self._inside else self._emit)(self._pending[:index])
                self._pending = self._pending[index + len(tag) :]
                self._inside = not self._inside
                continue
            keep = _partial_suffix(self._pending, tag)
            visible = self._pending[: len(self._pending) - keep]
            if visible:
                (self._hidden if self._inside else self._emit)(visible)
            self._pending = self._pending[len(visible) :]
            return

    def flush(self) -> None:
        """The stream ended: emit text held back as a possible tag start, unless inside a think block."""
        if self._pending and not self._inside:
            self._emit(self._pending)
        self._pending = ""


def _partial_suffix(text: str, tag: str) -> int:
    """Length of the longest suffix of `text` that is a proper prefix of `tag`."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-size:]):
            return size
    return 0


def sanitize_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keep only the standard chat keys, so stored extras never reach the provider."""
    return [{k: v for k, v in m.items() if k in _MESSAGE_KEYS} for m in messages]


def import_litellm() -> Any:
    """Import litellm offline and quiet; it costs seconds, so only where a model is called."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    from bot.logs import adopt_library_loggers

    adopt_library_loggers()
    litellm.suppress_debug_info = True
    litellm.drop_params = True
    return litellm


class LiteLLMProvider:
    """Chat completions through litellm with retries, idle timeouts on streams and clean errors."""

    def __init__(self, config: LLMConfig, retry: RetryPolicy | None = None) -> None:
        self.model = config.model
        self._config = config
        self._retry = retry or RetryPolicy(attempts=4, base_delay=1.0, max_delay=30.0)
        self._fast = fast_path_for(config)
        self._litellm: Any = None
        self._api_key, self._missing_keys = openai_key(config) if self._fast else (None, [])

    async def warm_up(self) -> None:
        """Load what the first call needs (litellm unless on the fast path, the price table) off the event loop."""
        if self._fast is not None:
            await self._fast.warm_up()
        elif self._litellm is None:
            litellm = await asyncio.to_thread(import_litellm)
            self._api_key, self._missing_keys = _resolve_key(litellm, self._config)
            self._litellm = litellm
        await asyncio.to_thread(call_cost, self.model, 0, 0)

    async def aclose(self) -> None:
        """Close the fast path's pooled connections."""
        if self._fast is not None:
            await self._fast.aclose()

    async def _acompletion(self, **request: Any) -> Any:
        if self._fast is not None:
            return await self._fast.acompletion(**request)
        return await self._litellm.acompletion(**request)

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
                async with asyncio.timeout(self._config.timeout):
                    return await self._complete(request)
            reasoning = on_delta.reasoning if isinstance(on_delta, ReasoningSink) else _ignore
            return await self._stream(request, show, reasoning)

        tries = 0

        def decide(exc: BaseException, attempt: int) -> float | None:
            nonlocal tries
            tries = attempt
            if shown or isinstance(exc, ProviderError):
                return None  # text already reached the user: a second answer would contradict it
            return retry_delay(classify(exc), attempt, self._retry)

        try:
            response = await self._retry.run(attempt, f"llm call to {self.model}", (Exception,), decide)
        except ProviderError:
            raise
        except Exception as exc:
            raise to_provider_error(classify(exc), exc, self.model, shown, tries) from exc
        return priced(response, self.model)

    def _request(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        config = self._config
        request: dict[str, Any] = {
            "model": config.model,
            "messages": sanitize_messages(messages),
            "max_tokens": config.max_tokens,
            "temperature": config.temperature,
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

    async def _complete(self, request: dict[str, Any]) -> LLMResponse:
        started = time.perf_counter()
        response = await self._acompletion(**request)
        choice = response.choices[0]
        message = choice.message
        calls = tuple(
            _tool_call(call.id, call.function.name, call.function.arguments or "")
            for call in (message.tool_calls or [])
        )
        usage = getattr(response, "usage", None)
        logger.debug("llm answered in %.1f ms", (time.perf_counter() - started) * 1000)
        return self._finished(strip_think(message.content or ""), calls, choice.finish_reason or "stop", _usage(usage))

    async def _stream(self, request: dict[str, Any], emit: DeltaHandler, reasoning: DeltaHandler) -> LLMResponse:
        """Stream one answer; `llm.timeout` bounds the wait for the first chunk and between chunks, not the whole."""
        shown = False

        def show(text: str) -> None:
            nonlocal shown
            shown = True
            emit(text)

        visible = ThinkFilter(show, reasoning)
        text: list[str] = []
        parts: dict[int, dict[str, str]] = {}
        finish_reason = "stop"
        usage = Usage()
        timeout = self._config.timeout
        loop = asyncio.get_running_loop()
        async with asyncio.timeout(timeout) as idle:
            stream = await self._acompletion(**request, stream=True, stream_options={"include_usage": True})
            async for chunk in stream:
                idle.reschedule(loop.time() + timeout)
                if chunk_usage := getattr(chunk, "usage", None):
                    usage = _usage(chunk_usage)
                if not chunk.choices:
                    continue
                choice = chunk.choices[0]
                finish_reason = choice.finish_reason or finish_reason
                delta = choice.delta
                if thought := getattr(delta, "reasoning_content", None):
                    reasoning(thought)
                if delta.content:
                    text.append(delta.content)
                    visible.feed(delta.content)
                for fragment in delta.tool_calls or []:
                    part = parts.setdefault(fragment.index or 0, {"id": "", "name": "", "arguments": ""})
                    part["id"] = fragment.id or part["id"]
                    if fragment.function:
                        part["name"] = fragment.function.name or part["name"]
                        part["arguments"] += fragment.function.arguments or ""
        visible.flush()
        content = strip_think("".join(text))
        # litellm reports finish_reason "stop" for a stream cut short; only the wrapper knows none arrived.
        if getattr(stream, "received_finish_reason", finish_reason) is None:
            if not shown:
                raise StreamCut(f"the stream from {self.model} ended without a finish reason")
            logger.warning(
                "llm stream from %s ended without a finish reason after %d characters; kept as incomplete",
                self.model,
                len(content),
            )
            emit(f"\n\n{CUT_NOTE}")
            return LLMResponse(f"{content}\n\n{CUT_NOTE}", (), "cut", usage)
        calls = tuple(
            _tool_call(part["id"] or f"call_{index}", part["name"], part["arguments"])
            for index, part in sorted(parts.items())
        )
        return self._finished(content, calls, finish_reason, usage, emit if shown else None)

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


def _resolve_key(litellm: Any, config: LLMConfig) -> tuple[str | None, list[str]]:
    """The key to send, and the variables to name when a hosted provider has none (then the call fails at once)."""
    key = config.api_key.get_secret_value()
    if key:
        return key, []
    missing = [name for name in litellm.validate_environment(config.model)["missing_keys"] if name.endswith("_API_KEY")]
    if not missing:
        return None, []
    if config.api_base:
        return PLACEHOLDER_KEY, []  # a local OpenAI-compatible server needs no key, but the client insists on one
    return None, missing


def priced(response: LLMResponse, model: str) -> LLMResponse:
    """The response with its usage's cost filled in from the model's price per token."""
    usage = response.usage
    cost = call_cost(model, usage.prompt_tokens, usage.completion_tokens)
    return response if not cost else replace(response, usage=replace(usage, cost=cost))


def _tool_call(call_id: str, name: str, raw: str) -> ToolCall:
    arguments, error = parse_arguments(raw)
    return ToolCall(id=call_id, name=name, arguments=arguments, raw_arguments=raw, arguments_error=error)


def _usage(usage: Any) -> Usage:
    if usage is None:
        return Usage()
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) or getattr(usage, "cache_read_input_tokens", None) or 0
    return Usage(
        int(getattr(usage, "prompt_tokens", 0) or 0), int(getattr(usage, "completion_tokens", 0) or 0), int(cached)
    )

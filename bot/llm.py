"""The LLM provider: one protocol, one litellm-backed implementation."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from bot.config import LLMConfig
from bot.errors import (
    ContextOverflow,
    ModelNotFound,
    ProviderAuthError,
    ProviderError,
    ProviderUnavailable,
)
from bot.retry import RetryPolicy

logger = logging.getLogger(__name__)

_MESSAGE_KEYS = frozenset({"role", "content", "tool_calls", "tool_call_id", "name"})
_THINK_BLOCK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL)

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
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True, slots=True)
class LLMResponse:
    """What the model answered: text, tool calls, or both."""

    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str = "stop"
    usage: Usage = field(default_factory=Usage)


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


class ThinkFilter:
    """Streams text through, holding back whatever sits inside `<think>…</think>`."""

    def __init__(self, emit: DeltaHandler) -> None:
        self._emit = emit
        self._pending = ""
        self._inside = False

    def feed(self, chunk: str) -> None:
        """Take a chunk; emit the part that is certainly visible."""
        self._pending += chunk
        while self._pending:
            tag = "</think>" if self._inside else "<think>"
            index = self._pending.find(tag)
            if index >= 0:
                if not self._inside and index:
                    self._emit(self._pending[:index])
                self._pending = self._pending[index + len(tag) :]
                self._inside = not self._inside
                continue
            keep = _partial_suffix(self._pending, tag)
            visible = self._pending[: len(self._pending) - keep]
            if visible and not self._inside:
                self._emit(visible)
            self._pending = self._pending[len(visible) :]
            return


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
    """Chat completions through litellm with retries, a hard timeout and clean errors."""

    def __init__(self, config: LLMConfig, retry: RetryPolicy | None = None) -> None:
        self.model = config.model
        self._config = config
        self._retry = retry or RetryPolicy(attempts=4, base_delay=1.0, max_delay=30.0)
        self._litellm = import_litellm()
        errors = self._litellm
        self._transient: tuple[type[BaseException], ...] = (
            errors.RateLimitError,
            errors.InternalServerError,
            errors.ServiceUnavailableError,
            errors.BadGatewayError,
            errors.APIConnectionError,
            errors.Timeout,
            TimeoutError,
        )

    async def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        on_delta: DeltaHandler | None = None,
        max_tokens: int | None = None,
    ) -> LLMResponse:
        """Answer a conversation; stream visible text to `on_delta` when given; `max_tokens` lowers the reply cap."""
        request = self._request(messages, tools)
        if max_tokens is not None:
            request["max_tokens"] = max_tokens

        async def attempt() -> LLMResponse:
            emitted = False

            def track(text: str) -> None:
                nonlocal emitted
                emitted = True
                assert on_delta is not None
                on_delta(text)

            try:
                async with asyncio.timeout(self._config.timeout):
                    if on_delta is None:
                        return await self._complete(request)
                    return await self._stream(request, ThinkFilter(track))
            except self._transient as exc:
                if emitted:
                    raise ProviderUnavailable(_describe(exc)) from exc
                raise

        try:
            return await self._retry.run(attempt, f"llm call to {self.model}", self._transient)
        except ProviderError:
            raise
        except self._transient as exc:
            raise ProviderUnavailable(_describe(exc)) from exc
        except Exception as exc:
            raise self._translate(exc) from exc

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
        if key := config.api_key.get_secret_value():
            request["api_key"] = key
        if config.api_base:
            request["api_base"] = config.api_base
        if tools:
            request["tools"] = tools
        return request

    async def _complete(self, request: dict[str, Any]) -> LLMResponse:
        started = time.perf_counter()
        response = await self._litellm.acompletion(**request)
        choice = response.choices[0]
        message = choice.message
        calls = tuple(
            _tool_call(call.id, call.function.name, call.function.arguments or "")
            for call in (message.tool_calls or [])
        )
        usage = getattr(response, "usage", None)
        logger.debug("llm answered in %.1f ms", (time.perf_counter() - started) * 1000)
        return LLMResponse(
            content=strip_think(message.content or ""),
            tool_calls=calls,
            finish_reason=choice.finish_reason or "stop",
            usage=_usage(usage),
        )

    async def _stream(self, request: dict[str, Any], visible: ThinkFilter) -> LLMResponse:
        stream = await self._litellm.acompletion(**request, stream=True, stream_options={"include_usage": True})
        text: list[str] = []
        parts: dict[int, dict[str, str]] = {}
        finish_reason = "stop"
        usage = Usage()
        async for chunk in stream:
            if chunk_usage := getattr(chunk, "usage", None):
                usage = _usage(chunk_usage)
            if not chunk.choices:
                continue
            choice = chunk.choices[0]
            finish_reason = choice.finish_reason or finish_reason
            delta = choice.delta
            if delta.content:
                text.append(delta.content)
                visible.feed(delta.content)
            for fragment in delta.tool_calls or []:
                part = parts.setdefault(fragment.index or 0, {"id": "", "name": "", "arguments": ""})
                part["id"] = fragment.id or part["id"]
                if fragment.function:
                    part["name"] = fragment.function.name or part["name"]
                    part["arguments"] += fragment.function.arguments or ""
        calls = tuple(
            _tool_call(part["id"] or f"call_{index}", part["name"], part["arguments"])
            for index, part in sorted(parts.items())
        )
        return LLMResponse(strip_think("".join(text)), calls, finish_reason, usage)

    def _translate(self, exc: Exception) -> ProviderError:
        """Map a litellm error onto our tree, logging the detail the user never sees."""
        errors = self._litellm
        kinds: list[tuple[type[BaseException], type[ProviderError]]] = [
            (errors.AuthenticationError, ProviderAuthError),
            (errors.PermissionDeniedError, ProviderAuthError),
            (errors.NotFoundError, ModelNotFound),
            (errors.ContextWindowExceededError, ContextOverflow),
        ]
        for source, target in kinds:
            if isinstance(exc, source):
                logger.error("llm call failed for model %s: %s", self.model, _describe(exc))
                return target(_describe(exc))
        logger.error("llm call failed for model %s: %s", self.model, _describe(exc))
        return ProviderError(_describe(exc))


def _tool_call(call_id: str, name: str, raw: str) -> ToolCall:
    arguments, error = parse_arguments(raw)
    return ToolCall(id=call_id, name=name, arguments=arguments, raw_arguments=raw, arguments_error=error)


def _usage(usage: Any) -> Usage:
    if usage is None:
        return Usage()
    return Usage(int(getattr(usage, "prompt_tokens", 0) or 0), int(getattr(usage, "completion_tokens", 0) or 0))


def _describe(exc: BaseException) -> str:
    """A one-line description of an exception for the log, capped in length."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {text[:300]}"

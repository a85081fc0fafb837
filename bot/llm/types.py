"""What a model call returns (ToolCall, Usage, LLMResponse) and the protocols every provider meets."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

CUT_NOTE = "(the reply was cut off)"
LENGTH_NOTE = "(cut at the max_tokens limit)"

DeltaHandler = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call requested by the model; `arguments_error` is set when they are unusable, `repaired` when they
    arrived as broken JSON (cut short, say) and were mended into what may not be what the model meant."""

    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str = ""
    arguments_error: str | None = None

    @property
    def repaired(self) -> bool:
        """True when the raw arguments were not valid JSON, so `arguments` is json_repair's guess."""
        if self.arguments_error or not self.raw_arguments.strip():
            return False
        try:
            json.loads(self.raw_arguments)
        except ValueError:
            return True
        return False

    def as_message_part(self) -> dict[str, Any]:
        """The OpenAI wire form, as stored in an assistant message."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.raw_arguments or "{}"},
        }


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


def parsed_call(call_id: str, name: str, raw: str) -> ToolCall:
    """A tool call with its raw arguments parsed (and repaired, or marked unusable) by `parse_arguments`."""
    arguments, error = parse_arguments(raw)
    return ToolCall(id=call_id, name=name, arguments=arguments, raw_arguments=raw, arguments_error=error)


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
    reasoning: str = ""  # the model's reasoning for this answer (reasoning fields, `<think>` blocks), shown or not

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


@runtime_checkable
class ReasoningSink(Protocol):
    """A delta handler that also takes the model's reasoning (reasoning_content, `<think>` blocks)."""

    def __call__(self, text: str) -> None: ...

    def reasoning(self, text: str) -> None: ...


def tool_call_message(content: str, calls: tuple[ToolCall, ...]) -> dict[str, Any]:
    """The assistant message that records a round of tool calls."""
    return {"role": "assistant", "content": content or None, "tool_calls": [c.as_message_part() for c in calls]}

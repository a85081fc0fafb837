"""Turns that end early: the time bound, how a failed model call ended them, and closing the calls they left open."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

from bot.errors import (
    BudgetExceeded,
    ModelNotFound,
    PromptTooLarge,
    ProviderAuthError,
    ProviderError,
    ProviderUnavailable,
    TurnTimedOut,
)

T = TypeVar("T")

STOPPED = "Not finished: cancelled by /stop."
SHUT_DOWN = "Not finished: cancelled because the bot was shutting down."
CRASHED = "Not finished: the turn crashed before this call completed."
MODEL_FAILED = "Not finished: the model call failed before this call completed."
RESTARTED = "Not finished: the bot stopped (crash or restart) before this call completed."


def provider_outcome(exc: ProviderError) -> str:
    """How a turn whose model call failed ended: `budget exceeded`, `key refused` (401/403) or `provider error`."""
    if isinstance(exc, BudgetExceeded):
        return "budget exceeded"
    return "key refused" if isinstance(exc, ProviderAuthError) else "provider error"


OWNER_FIXES = (ProviderUnavailable, ProviderAuthError, ModelNotFound, PromptTooLarge)
"""Model failures that time or the owner mends (the server, the key, the model's name, the prompt's size)."""


def dead_letter_reason(exc: Exception) -> str | None:
    """Why a turn that raised `exc` leaves its messages as dead letters, or None when it does not: a crash, or a
    model failure the owner or time mends. One the sender must mend (a budget, a conversation or message too long,
    a request the provider refuses) is answered and done, as a timed-out turn is."""
    if isinstance(exc, OWNER_FIXES):
        return f"its turn failed: the model call failed ({type(exc).__name__})"
    if isinstance(exc, ProviderError):
        return None
    return f"its turn crashed ({type(exc).__name__}; the traceback is in the log)"


def timed_out(seconds: float) -> str:
    """The result of a call cut off by agent.turn_timeout."""
    return f"Not finished: the turn ran past its {human_duration(seconds)} time limit and was cancelled."


def timeout_reply(seconds: float) -> str:
    """The one line a user gets when their turn timed out."""
    return (
        f"I stopped because this took longer than my {human_duration(seconds)} limit; "
        "tell me to continue or narrow the request down."
    )


def human_duration(seconds: float) -> str:
    """`10m`, `1h`, `90s`, `0.3s`: the way durations are written in the config."""
    for unit, size in (("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


async def bounded(work: Awaitable[T], seconds: float) -> T:
    """Await `work`, cancelling it past `seconds` and raising TurnTimedOut then."""
    deadline = asyncio.timeout(seconds)
    try:
        async with deadline:
            return await work
    except TimeoutError:
        if deadline.expired():
            raise TurnTimedOut(seconds) from None
        raise


def unanswered_calls(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The calls of the last round of tool calls that have no result yet (none when the turn moved on)."""
    answered: set[str] = set()
    for message in reversed(messages):
        role = message.get("role")
        if role == "tool":
            answered.add(str(message.get("tool_call_id")))
            continue
        if role == "assistant" and message.get("tool_calls"):
            return [call for call in message["tool_calls"] if call["id"] not in answered]
        return []
    return []


def closing_results(messages: list[dict[str, Any]], reason: str) -> list[dict[str, Any]]:
    """A `tool` result saying `reason` for each call left unanswered, so finished work stays in history."""
    return [
        {"role": "tool", "tool_call_id": call["id"], "name": call["function"]["name"], "content": reason}
        for call in unanswered_calls(messages)
    ]

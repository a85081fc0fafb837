"""The loop breaker: a turn that keeps making the same tool call is told to change course, then stopped."""

from __future__ import annotations

import json
from collections import Counter

from bot.llm.types import ToolCall

WARN_AT = 3  # the third identical call is refused with a note to the model
STOP_AT = 5  # the fifth ends the turn


class RepeatGuard:
    """Counts each (tool, arguments) pair of one turn."""

    def __init__(self) -> None:
        self._seen: Counter[tuple[str, str]] = Counter()

    def record(self, call: ToolCall) -> int:
        """Count `call`; returns how many times it has now been made in this turn."""
        key = (call.name, json.dumps(call.arguments, sort_keys=True, default=str))
        self._seen[key] += 1
        return self._seen[key]


def refusal(call: ToolCall, count: int) -> str:
    """The error result a repeated call gets instead of running."""
    return (
        f"Error: this is call number {count} of {call.name} with exactly these arguments in this turn, and it was not "
        "run: repeating it will not give a different result. Change course: try other arguments or another tool, "
        "or answer with what you have."
    )


def stopped_reply(call: ToolCall) -> str:
    """What the user reads when the turn is ended for repeating itself."""
    return (
        f"I stopped: I kept calling the {call.name} tool with the same arguments ({STOP_AT} times) without getting "
        "anywhere. Tell me how you'd like me to go about it, or rephrase the request."
    )

"""Where a delta handler takes reasoning: decided as the `ReasoningSink` protocol decides it."""

from typing import Any

import pytest

from bot.llm.reasoning import ignore, reasoning_handler
from bot.llm.types import DeltaHandler, ReasoningSink


class Sink:
    def __init__(self) -> None:
        self.thoughts: list[str] = []

    def __call__(self, text: str) -> None:
        pass

    def reasoning(self, text: str) -> None:
        self.thoughts.append(text)


class Blocked(Sink):
    reasoning = None  # type: ignore[assignment]


def plain(text: str) -> None:
    pass


@pytest.mark.parametrize(
    "handler", [Sink(), Blocked(), plain, print, lambda text: None], ids=["sink", "blocked", "plain", "print", "lambda"]
)
def test_a_handler_takes_reasoning_exactly_when_it_is_a_reasoning_sink(handler: Any) -> None:
    assert (reasoning_handler(handler) is not ignore) is isinstance(handler, ReasoningSink)


def test_a_sink_gets_the_reasoning() -> None:
    sink = Sink()
    handler: DeltaHandler = sink
    reasoning_handler(handler)("why")
    assert sink.thoughts == ["why"]

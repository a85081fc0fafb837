"""A swappable provider: a swap takes effect from the next call; a call under way finishes on the old provider."""

import asyncio
from typing import Any

from bot.llm.types import LLMResponse
from bot.usage.model_stack import SwappableProvider


class Named:
    def __init__(self, model: str, gate: asyncio.Event | None = None) -> None:
        self.model = model
        self._gate = gate
        self.entered = asyncio.Event()
        self.calls: list[tuple[Any, ...]] = []

    async def chat(
        self, messages: Any, tools: Any = None, on_delta: Any = None, max_tokens: int | None = None
    ) -> LLMResponse:
        self.calls.append((messages, tools, on_delta, max_tokens))
        self.entered.set()
        if self._gate is not None:
            await self._gate.wait()
        return LLMResponse(f"from {self.model}")


async def test_a_swap_answers_from_the_next_call_and_a_call_under_way_finishes_on_the_old() -> None:
    gate = asyncio.Event()
    old, new = Named("old", gate), Named("new")
    live = SwappableProvider(old)
    under_way = asyncio.create_task(live.chat([{"role": "user", "content": "hi"}]))
    await old.entered.wait()
    live.swap(new)
    assert live.model == "new"
    answer = await live.chat([], None, None, max_tokens=5)
    gate.set()
    assert (answer.content, (await under_way).content) == ("from new", "from old")
    assert new.calls == [([], None, None, 5)]

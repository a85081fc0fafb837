import asyncio

import pytest

from channels.gateway import typing_indicators
from channels.gateway.typing_indicators import TypingIndicators


class Shows:
    def __init__(self) -> None:
        self.count = 0
        self.shown = asyncio.Event()

    async def __call__(self) -> None:
        self.count += 1
        self.shown.set()


async def test_a_turn_quicker_than_the_delay_shows_no_typing_and_starts_no_task() -> None:
    indicators, shows = TypingIndicators(), Shows()
    indicators.start("telegram:1", shows)
    indicators.stop("telegram:1")
    await asyncio.sleep(typing_indicators.TYPING_DELAY * 2)
    assert shows.count == 0
    assert "telegram:1" not in indicators


async def test_a_long_turn_shows_typing_and_refreshes_it_until_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(typing_indicators, "TYPING_DELAY", 0.01)
    monkeypatch.setattr(typing_indicators, "TYPING_REFRESH", 0.01)
    indicators, shows = TypingIndicators(), Shows()
    indicators.start("telegram:1", shows)
    indicators.start("telegram:1", shows)  # a second turn start in the same session shows no second indicator
    await asyncio.wait_for(shows.shown.wait(), 5)
    while shows.count < 3:
        shows.shown.clear()
        await asyncio.wait_for(shows.shown.wait(), 5)
    await indicators.stop_all()
    after = shows.count
    await asyncio.sleep(0.05)
    assert shows.count == after
    assert "telegram:1" not in indicators


async def test_a_failing_indicator_keeps_refreshing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(typing_indicators, "TYPING_DELAY", 0.0)
    monkeypatch.setattr(typing_indicators, "TYPING_REFRESH", 0.0)
    calls = asyncio.Queue[int]()

    async def failing() -> None:
        calls.put_nowait(1)
        raise RuntimeError("platform down")

    indicators = TypingIndicators()
    indicators.start("slack:C1", failing)
    for _ in range(2):
        await asyncio.wait_for(calls.get(), 5)
    await indicators.stop_all()

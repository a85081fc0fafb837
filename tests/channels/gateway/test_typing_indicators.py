import asyncio

from channels.gateway.typing_indicators import TypingIndicators


class Shows:
    def __init__(self) -> None:
        self.count = 0
        self.shown = asyncio.Event()

    async def __call__(self) -> None:
        self.count += 1
        self.shown.set()


async def test_a_turn_quicker_than_the_delay_shows_no_typing_and_starts_no_task() -> None:
    indicators, quick, slow = TypingIndicators(delay=0.0), Shows(), Shows()
    indicators.start("telegram:1", quick)
    indicators.stop("telegram:1")
    assert "telegram:1" not in indicators
    indicators.start("telegram:2", slow)  # its timer fires after the first one's would have
    await asyncio.wait_for(slow.shown.wait(), 5)
    assert quick.count == 0
    await indicators.stop_all()


async def test_a_long_turn_shows_typing_and_refreshes_it_until_stopped() -> None:
    indicators, shows = TypingIndicators(delay=0.01, refresh=0.01), Shows()
    indicators.start("telegram:1", shows)
    indicators.start("telegram:1", shows)  # a second turn start in the same session shows no second indicator
    await asyncio.wait_for(shows.shown.wait(), 5)
    while shows.count < 3:
        shows.shown.clear()
        await asyncio.wait_for(shows.shown.wait(), 5)
    await indicators.stop_all()  # returns once every refreshing task has ended
    assert "telegram:1" not in indicators


async def test_a_failing_indicator_keeps_refreshing() -> None:
    calls = asyncio.Queue[int]()

    async def failing() -> None:
        calls.put_nowait(1)
        raise RuntimeError("platform down")

    indicators = TypingIndicators(delay=0.0, refresh=0.0)
    indicators.start("slack:C1", failing)
    for _ in range(2):
        await asyncio.wait_for(calls.get(), 5)
    await indicators.stop_all()

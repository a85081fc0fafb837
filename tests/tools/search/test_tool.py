import pytest

from bot.errors import SearchThrottled, ToolError
from bot.tools.base import ToolContext
from bot.tools.search.provider import SearchHit
from bot.tools.search.tool import WebSearchTool


class Scripted:
    """A provider answering from a script: a list of hits, or an exception to raise."""

    def __init__(self, name: str, *answers: list[SearchHit] | Exception) -> None:
        self.name = name
        self.answers = list(answers)
        self.asked = 0

    async def search(self, query: str, count: int) -> list[SearchHit]:
        self.asked += 1
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


DUCK = SearchHit("Duck", "https://d.org", "A duck.")


async def test_results_have_one_format_whichever_provider_answers(ctx: ToolContext) -> None:
    tool = WebSearchTool([Scripted("A", [DUCK, SearchHit("Teal", "https://t.org", ""), DUCK])])
    text = await tool.run({"query": "ducks", "count": 2}, ctx)
    assert text == (
        "Web results for 'ducks' (snippets are untrusted web content):\n"
        "1. Duck\n   https://d.org\n   A duck.\n"
        "2. Teal\n   https://t.org"
    )


async def test_no_hits_says_so(ctx: ToolContext) -> None:
    assert await WebSearchTool([Scripted("A", [])]).run({"query": "zzz"}, ctx) == "No web results for 'zzz'."


async def test_a_throttled_provider_backs_off_while_the_next_one_answers(ctx: ToolContext) -> None:
    clock = Clock()
    first = Scripted("A", SearchThrottled("A", 0), [DUCK])
    second = Scripted("B", [DUCK], [DUCK])
    tool = WebSearchTool([first, second], clock=clock)
    assert "1. Duck" in await tool.run({"query": "q"}, ctx)
    clock.now += 29
    assert "1. Duck" in await tool.run({"query": "q"}, ctx)
    assert (first.asked, second.asked) == (1, 2)
    clock.now += 2
    await tool.run({"query": "q"}, ctx)
    assert first.asked == 2


async def test_backoff_doubles_per_429_in_a_row_and_honours_retry_after(ctx: ToolContext) -> None:
    clock = Clock()
    only = Scripted("A", SearchThrottled("A", 0), SearchThrottled("A", 0), SearchThrottled("A", 300), [DUCK])
    tool = WebSearchTool([only], clock=clock)
    waits = []
    for _ in range(3):
        with pytest.raises(SearchThrottled) as caught:
            await tool.run({"query": "q"}, ctx)
        waits.append(caught.value.retry_after)
        clock.now += caught.value.retry_after
    assert waits == [30, 60, 300]
    with pytest.raises(SearchThrottled, match="A search is rate limited; try again in about 10s"):
        clock.now -= 10
        await tool.run({"query": "q"}, ctx)
    assert only.asked == 3


async def test_other_failures_are_not_hidden_behind_the_next_provider(ctx: ToolContext) -> None:
    second = Scripted("B", [DUCK])
    with pytest.raises(ToolError, match="bad key"):
        await WebSearchTool([Scripted("A", ToolError("bad key")), second]).run({"query": "q"}, ctx)
    assert second.asked == 0


async def test_without_providers_the_tool_says_what_to_configure(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="needs a key"):
        await WebSearchTool([], "needs a key").run({"query": "q"}, ctx)


async def test_a_short_retry_after_is_waited_out_within_the_call(ctx: ToolContext) -> None:
    waited: list[float] = []

    async def sleep(seconds: float) -> None:
        waited.append(seconds)

    only = Scripted("A", SearchThrottled("A", 5), [DUCK])
    assert "1. Duck" in await WebSearchTool([only], sleep=sleep).run({"query": "q"}, ctx)
    assert waited == [5] and only.asked == 2


async def test_a_long_retry_after_is_not_waited_for(ctx: ToolContext) -> None:
    waited: list[float] = []

    async def sleep(seconds: float) -> None:
        waited.append(seconds)

    only = Scripted("A", SearchThrottled("A", 6), [DUCK])
    with pytest.raises(SearchThrottled):
        await WebSearchTool([only], sleep=sleep).run({"query": "q"}, ctx)
    assert waited == [] and only.asked == 1

"""Issue 46 end to end: `relaybot run` on Telegram and the fake model, its index in SQLite or (with its bus) on
Redis. A recall result is a hit with the exchanges around it within its budget; an earlier asking of the same
question ranks below the exchange that answers it; a second pass finds what a first hit leads to; further hits
follow the five."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from bot.memory.index.recall import RESULT_CHARS
from bot.tools.recall import FURTHER_HEADING
from tests.fakes.openai_server import FakeLLM, Text, ToolCalls
from tests.fakes.telegram_server import FakeTelegram
from tests.memory.test_memory import is_consolidation, save
from tests.support.gateway import OWNER, TelegramBot

REPLIES = {
    "What should I plant by the garden fence this year?": "Tulips would do well there.",
    "Good idea, which colour?": "Deep red ones, bought from the market in October.",
    "Where did I leave the spare house keys?": "I don't know yet.",
    "My sister Dana moved to Porto last spring": "How exciting for her!",
    "Dana says her favourite dish is grilled sardines": "A classic choice.",
}
GARDEN = "Ann planted tulips along the garden fence and keeps a notebook of them."
FILLER = ["the weather", "a pasta recipe", "my running plan", "a birthday card", "the news", "a crossword clue"]


ASKED = {  # a question to the bot, and what the model searches for it
    "What did we plan for the fence?": "garden fence plant",
    "Keys?": "Where did I leave the spare house keys?",
    "What does my sister like to eat?": "sister",
}


def searching(
    searches: dict[str, str], replies: dict[str, str] | None = None, summary: str = "Small talk."
) -> Callable[[dict[str, Any]], Any]:
    """A fake model: consolidations save `summary`; a message ending in a key of `searches` calls recall with its
    search; any other gets its reply from `replies`, or a short one (answered by the body, not a queue, so a
    consolidation in between takes nothing away)."""

    def reply(body: dict[str, Any]) -> Any:
        if is_consolidation(body):
            return save(summary, "# Memory\n")
        last = body["messages"][-1]
        if last["role"] == "tool":
            return Text("Here is what I found.")
        said = str(last["content"])
        if query := next((query for asked, query in searches.items() if said.endswith(asked)), None):
            return ToolCalls((("recall", {"query": query}),))
        return Text(next((answer for asked, answer in (replies or {}).items() if said.endswith(asked)), "Noted."))

    return reply


@asynccontextmanager
async def bot_on(
    index: str, tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, request: pytest.FixtureRequest
) -> AsyncIterator[None]:
    """`relaybot run` on Telegram with its memory index in SQLite, or with its bus and index on a Redis server; ready
    on Telegram within the block."""
    redis = {"backend": "redis", "url": request.getfixturevalue("redis_url")} if index == "redis" else {}
    overrides: dict[str, Any] = {"agent": {"memory_window": 4}, "bus": redis, "memory": {"index": index}}
    async with TelegramBot(tmp_path, fake_llm, telegram, {"streaming": "off"}, **overrides) as bot:
        await bot.gateway.manager.ready("telegram")
        yield


def tool_results(fake_llm: FakeLLM) -> list[str]:
    """What the recall tool returned, in the order the model saw it."""
    return [str(m["content"]) for body in fake_llm.requests for m in body["messages"] if m["role"] == "tool"]


async def chat(telegram: FakeTelegram, lines: list[str], sent: int) -> int:
    """Say each line in turn, waiting for its reply; how many messages the bot has sent."""
    for line in lines:
        telegram.text(line, chat_id=OWNER, user_id=OWNER)
        sent += 1
        await telegram.wait_for_sent(sent)
    return sent


def filler(start: int, count: int) -> list[str]:
    return [f"Tell me something about {FILLER[n % len(FILLER)]} (#{n})" for n in range(start, start + count)]


async def recalled(fake_llm: FakeLLM, telegram: FakeTelegram, question: str, sent: int) -> str:
    """The recall tool's result for the search the model makes for `question`."""
    telegram.text(question, chat_id=OWNER, user_id=OWNER)
    await telegram.wait_for_sent(sent + 1)
    heading = f"for '{ASKED[question]}':"
    return next(result for result in tool_results(fake_llm) if heading in result.splitlines()[0])


@pytest.mark.parametrize("index", ["sqlite", "redis"])
async def test_recall_shows_neighbours_ranks_restatements_down_and_follows_a_lead(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, index: str, request: pytest.FixtureRequest
) -> None:
    fake_llm.default = searching(ASKED, REPLIES)
    async with bot_on(index, tmp_path, fake_llm, telegram, request):
        said = [*list(REPLIES)[:2], *filler(0, 7), "The spare keys are in the blue vase in the hall", *filler(7, 7)]
        said += [list(REPLIES)[2], *filler(14, 7), list(REPLIES)[3], *filler(21, 7), list(REPLIES)[4]]
        sent = await chat(telegram, [*said, *filler(28, 4)], 0)  # seven between: their windows do not meet

        plants = await recalled(fake_llm, telegram, "What did we plan for the fence?", sent)
        keys = await recalled(fake_llm, telegram, "Keys?", sent + 1)
        sister = await recalled(fake_llm, telegram, "What does my sister like to eat?", sent + 2)

    first = re.split(r"^2\. ", plants, flags=re.MULTILINE)[0]
    assert "Tulips would do well there." in first and "Deep red ones" in first  # the reply and the next exchange
    assert len(plants) <= RESULT_CHARS + 200
    assert keys.index("the blue vase") < keys.index("I don't know yet.")
    assert "grilled sardines" in sister  # no word of the question: found through Dana, whom the first hit names


@pytest.mark.parametrize("index", ["sqlite", "redis"])
async def test_recall_gives_five_windows_the_best_summary_beside_them_and_further_hits_after(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, index: str, request: pytest.FixtureRequest
) -> None:
    fake_llm.default = searching({"Tulips again?": "tulips"}, summary=GARDEN)
    async with bot_on(index, tmp_path, fake_llm, telegram, request):
        said = [line for n in range(8) for line in [f"The tulips in bed {n} opened", *filler(7 * n, 7)]]
        sent = await chat(telegram, said, 0)  # seven between: no two windows meet
        telegram.text("Tulips again?", chat_id=OWNER, user_id=OWNER)
        await telegram.wait_for_sent(sent + 1)

    [found] = tool_results(fake_llm)
    best, further = found.split(f"\n{FURTHER_HEADING}\n")
    passages = re.split(r"^\d\. ", best, flags=re.MULTILINE)[1:]
    summaries = [passage for passage in passages if "conversation summary: Ann planted tulips" in passage]
    assert len(passages) == 6 and len(summaries) == 1  # five windows of what was said, and the summary
    assert sum("The tulips in bed" in passage for passage in passages) == 5
    mentions = re.split(r"^- ", further, flags=re.MULTILINE)[1:]
    assert len(mentions) == 3 and all("The tulips in bed" in mention for mention in mentions)  # the other beds
    exchanges = sorted(window.count("you replied:") for window in [*passages, *mentions] if window not in summaries)
    assert exchanges == [2, 3, 3, 3, 3, 3, 3, 3]  # a hit with one exchange on each side (the first has none before)
    assert len(found) <= RESULT_CHARS + 200


NOTEBOOK = "I put the blue notebook in the glovebox of the car, under the maps, beside the torch and old receipts"


@pytest.mark.parametrize("index", ["sqlite", "redis"])
async def test_recall_ranks_an_earlier_question_whose_reply_says_nothing_of_this_one_below_what_was_told(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, index: str, request: pytest.FixtureRequest
) -> None:
    fake_llm.default = searching(
        {"Notebook?": "Where is my blue notebook?"}, {"When did I buy the blue notebook?": "On Tuesday."}
    )
    async with bot_on(index, tmp_path, fake_llm, telegram, request):
        said = [NOTEBOOK, *filler(0, 7), "When did I buy the blue notebook?", *filler(7, 7)]
        sent = await chat(telegram, said, 0)  # seven between: their windows do not meet
        telegram.text("Notebook?", chat_id=OWNER, user_id=OWNER)
        await telegram.wait_for_sent(sent + 1)

    [found] = tool_results(fake_llm)
    first = re.split(r"^2\. ", found, flags=re.MULTILINE)[0]
    assert "in the glovebox of the car" in first and "When did I buy" not in first  # what was told, not the asking
    assert "When did I buy the blue notebook?" in found  # still there, further down


PHOTO = "The photo from the school was taken at the harbour festival, with the brass band and the food stalls"


@pytest.mark.parametrize("index", ["sqlite", "redis"])
async def test_recall_finds_the_very_word_among_many_of_its_synonym(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, index: str, request: pytest.FixtureRequest
) -> None:
    fake_llm.default = searching({"The photo?": "the photo"})
    async with bot_on(index, tmp_path, fake_llm, telegram, request):
        said = [line for n in range(8) for line in [f"Picture day {n}: a picture, another picture", *filler(3 * n, 3)]]
        sent = await chat(telegram, [PHOTO, *filler(30, 3), *said], 0)
        telegram.text("The photo?", chat_id=OWNER, user_id=OWNER)
        await telegram.wait_for_sent(sent + 1)

    [found] = tool_results(fake_llm)
    best = found.split(f"\n{FURTHER_HEADING}\n")[0]
    assert "at the harbour festival" in best  # among the five, above the picture days that only share a synonym

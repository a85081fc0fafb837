"""Issue 46 end to end: `relaybot run` on Telegram and the fake model, on the local and the Redis index. A question
that names a kind of thing ("art") finds what was said about a thing of that kind ("a watercolor"), below what
names the kind itself; a word that names no kind brings nothing in. A question that names a thing the chat never
named ("Vivaldi") finds what was said of another of its kind ("Bach")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.e2e.test_memory_windows import bot_on, chat, filler, searching, tool_results
from tests.fakes.openai_server import FakeLLM
from tests.fakes.telegram_server import FakeTelegram

SEARCHED = {"Remind me?": "What art do I make?", "And the bins?": "Which bins did the council collect?"}


@pytest.mark.parametrize("index", ["sqlite", "redis"])
async def test_a_question_naming_a_kind_finds_the_things_of_that_kind(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, index: str, request: pytest.FixtureRequest
) -> None:
    fake_llm.default = searching(SEARCHED)
    async with bot_on(index, tmp_path, fake_llm, telegram, request):
        said = ["I spent Sunday on a watercolor of the harbour", *filler(0, 7), "The art club meets on Fridays"]
        said += [*filler(7, 7), "The council collected the blue recycling bins", *filler(14, 7)]
        sent = await chat(telegram, [*said, "Remind me?", "And the bins?"], 0)

    assert sent == len(said) + 2
    results = tool_results(fake_llm)
    art = next(result for result in results if "'What art do I make?'" in result.splitlines()[0])
    bins = next(result for result in results if "'Which bins did the council collect?'" in result.splitlines()[0])
    windows = re.split(r"^\d\. ", art, flags=re.MULTILINE)[1:]
    assert "The art club meets on Fridays" in windows[0]  # the kind itself first
    assert any("a watercolor of the harbour" in window for window in windows[1:])  # then a thing of that kind
    assert "watercolor" not in bins  # council and bins name no kind of painting


@pytest.mark.parametrize("index", ["sqlite", "redis"])
async def test_a_question_naming_a_thing_finds_what_was_said_of_others_of_its_kind(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, index: str, request: pytest.FixtureRequest
) -> None:
    fake_llm.default = searching({"Worth a ticket?": "Would I enjoy a Vivaldi concert?"})
    async with bot_on(index, tmp_path, fake_llm, telegram, request):
        said = ["Nothing calms me like Bach on a rainy evening", *filler(0, 14)]
        sent = await chat(telegram, [*said, "Worth a ticket?"], 0)

    assert sent == len(said) + 1
    [result] = [result for result in tool_results(fake_llm) if "'Would I enjoy a Vivaldi concert?'" in result]
    first = re.split(r"^\d\. ", result, flags=re.MULTILINE)[1]
    assert "Nothing calms me like Bach" in first  # Vivaldi was never said; Bach, a composer too, was

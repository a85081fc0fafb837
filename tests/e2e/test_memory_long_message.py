"""Issues 46 and 50 end to end: `relaybot run` on Telegram and the fake model, its index in SQLite or (with its bus) on
Redis. A long message is auto-recalled by its rarest words: the passage they point to comes before it in the prompt,
beside many that share its everyday words."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_memory_windows import bot_on, chat, filler, searching
from tests.fakes.openai_server import FakeLLM
from tests.fakes.telegram_server import FakeTelegram
from tests.memory.test_memory import is_consolidation

RECIPE = "Grandmother wrote her quince marmalade down on a card that hangs in the kitchen"
EVERYDAY = "at the market with the kids we bought bread, cheese, apples, coffee, milk, eggs, butter, honey and jam"
LONG = (
    f"Back {EVERYDAY} again, and later this week I want to try quince marmalade, so the kitchen will be busy while"
    " the kids are at football"
)


@pytest.mark.parametrize("index", ["sqlite", "redis"])
async def test_a_long_message_recalls_the_passage_its_rarest_words_point_to(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, index: str, request: pytest.FixtureRequest
) -> None:
    fake_llm.default = searching({})
    async with bot_on(index, tmp_path, fake_llm, telegram, request):
        said = [RECIPE, *(line for n in range(12) for line in [f"On day {n} {EVERYDAY}", *filler(3 * n, 3)])]
        said += ["Thanks", "See you"]  # the everyday passages, in a quarter of the chat, share many of its words
        await chat(telegram, [*said, LONG], 0)

    turns = [body["messages"][-1] for body in fake_llm.requests if not is_consolidation(body)]
    block = str(turns[-1]["content"]).partition("[end of recalled passages]")[0]
    assert str(turns[-1]["content"]).endswith(LONG)
    assert "market with the kids" in block  # the everyday passages are recalled too
    assert RECIPE in block  # ... and, among them, the one the rare words point to

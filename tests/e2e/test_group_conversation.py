"""A Telegram group through the whole gateway: overheard chatter reaches the next mention, /activation opens it."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from tests.fakes.openai_server import FakeLLM
from tests.fakes.telegram_server import FakeTelegram
from tests.support.gateway import OWNER, TelegramBot

GROUP = -1002
MEMBER = 55


@pytest_asyncio.fixture
async def bot(tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram) -> AsyncIterator[TelegramBot]:
    options = {"allow_from": [MEMBER]}
    async with TelegramBot(tmp_path, fake_llm, telegram, telegram_options=options) as running:
        await running.gateway.manager.ready("telegram")
        yield running


def in_group(telegram: FakeTelegram, text: str, user_id: int = OWNER) -> dict:
    return telegram.text(text, chat_id=GROUP, user_id=user_id, chat_type="supergroup")


async def test_a_mention_brings_the_chatter_since_the_bot_last_spoke(
    bot: TelegramBot, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    in_group(telegram, "the deploy failed again", user_id=MEMBER)
    in_group(telegram, "strangers talk too", user_id=999_001)
    in_group(telegram, "@relay_bot what went wrong?")
    await telegram.wait_for_sent(1)
    text = fake_llm.requests[0]["messages"][-1]["content"]
    assert "messages in this chat since you last spoke" in text and "the deploy failed again" in text
    assert "strangers talk too" not in text and text.endswith("what went wrong?")
    in_group(telegram, "@relay_bot and now?")
    await telegram.wait_for_sent(2)
    assert "since you last spoke" not in fake_llm.requests[1]["messages"][-1]["content"]


async def test_activation_always_makes_the_bot_answer_every_message_in_the_group(
    bot: TelegramBot, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    in_group(telegram, "/activation always")
    (confirmed,) = await telegram.wait_for_sent(1)
    assert confirmed["text"] == "I answer every message here." and fake_llm.requests == []
    in_group(telegram, "no mention needed now", user_id=MEMBER)
    sent = await telegram.wait_for_sent(2)
    assert sent[1]["chat_id"] == GROUP
    assert fake_llm.requests[0]["messages"][-1]["content"].endswith("no mention needed now")

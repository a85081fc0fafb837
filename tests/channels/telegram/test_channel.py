import re
import ssl
from pathlib import Path
from typing import Any

import pytest

from bot.access.pairing import PairingBook
from bot.bus import InboundMessage
from bot.config.channels.telegram import TelegramConfig
from bot.net.tls import client_context
from channels.telegram.channel import TelegramChannel
from tests.fakes.openai_server import FakeLLM, Text
from tests.fakes.telegram_html import html_visible_text
from tests.fakes.telegram_server import FakeTelegram
from tests.support.gateway import OWNER, TelegramBot

STRANGER = 77
GROUP = -1001


async def test_owner_dm_gets_the_model_reply(bot: TelegramBot, fake_llm: FakeLLM, telegram: FakeTelegram) -> None:
    fake_llm.script(Text("Hello **owner**"))
    telegram.text("hi there", chat_id=OWNER, user_id=OWNER)
    (sent,) = await telegram.wait_for_sent(1)
    assert sent["chat_id"] == OWNER and sent["text"] == "Hello <b>owner</b>" and sent["parse_mode"] == "HTML"
    assert fake_llm.requests[0]["messages"][-1]["content"].endswith("hi there")


async def test_unknown_sender_pairs_before_being_served(
    bot: TelegramBot, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    telegram.text("hello?", chat_id=STRANGER, user_id=STRANGER)
    (sent,) = await telegram.wait_for_sent(1)
    code = re.search(r"pairing code is ([A-Z2-9]{8})", sent["text"]).group(1)
    assert f"relaybot pairing approve telegram {code}" in sent["text"]
    telegram.text("still there?", chat_id=STRANGER, user_id=STRANGER)
    assert (await telegram.wait_for_sent(2))[1]["text"] == sent["text"]
    telegram.text("barrier", chat_id=OWNER, user_id=OWNER)
    await telegram.wait_for_sent(3)
    assert len(fake_llm.requests) == 1 and "barrier" in fake_llm.requests[0]["messages"][-1]["content"]
    assert [s["chat_id"] for s in telegram.sent] == [STRANGER, STRANGER, OWNER]
    assert PairingBook(bot.config.state_dir / "pairing.json").approve("telegram", code) == str(STRANGER)
    telegram.text("now?", chat_id=STRANGER, user_id=STRANGER)
    replies = await telegram.wait_for_sent(4)
    assert replies[3]["chat_id"] == STRANGER and replies[3]["text"].endswith("now?")


async def test_group_needs_a_mention_and_the_reply_quotes(
    bot: TelegramBot, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    telegram.text("just chatting", chat_id=GROUP, user_id=OWNER, chat_type="supergroup")
    update = telegram.text("@relay_bot what time is it?", chat_id=GROUP, user_id=OWNER, chat_type="supergroup")
    (sent,) = await telegram.wait_for_sent(1)
    assert len(fake_llm.requests) == 1
    assert fake_llm.requests[0]["messages"][-1]["content"].endswith("what time is it?")
    assert sent["chat_id"] == GROUP
    assert sent["reply_parameters"]["message_id"] == update["message"]["message_id"]


async def test_long_reply_is_split_with_code_blocks_intact(
    bot: TelegramBot, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    code = "```python\n" + "\n".join(f"value_{i} = {i}" for i in range(120)) + "\n```"
    prose = "\n\n".join(("Some words about the code. " * 12).strip() for _ in range(14))
    reply = (prose + "\n\n" + code + "\n\n" + prose)[:9000]
    fake_llm.script(Text(reply))
    telegram.text("explain", chat_id=OWNER, user_id=OWNER)
    sent = await telegram.wait_for_sent(3)
    assert len(telegram.sent) == 3
    assert all(len(html_visible_text(s["text"])) <= 4096 for s in sent)
    assert sum(s["text"].count("<pre>") for s in sent) == sum(s["text"].count("</pre>") for s in sent) >= 1


async def test_rejected_html_is_resent_as_plain_text(
    bot: TelegramBot, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    fake_llm.script(Text("**bold** answer"))
    telegram.fail("sendMessage", status=400, description="Bad Request: can't parse entities: unexpected end tag")
    telegram.text("hi", chat_id=OWNER, user_id=OWNER)
    (sent,) = await telegram.wait_for_sent(1)
    assert sent["text"] == "**bold** answer" and sent.get("parse_mode") is None


async def test_photo_reaches_the_model_as_an_image(bot: TelegramBot, fake_llm: FakeLLM, telegram: FakeTelegram) -> None:
    telegram.photo(b"\xff\xd8\xff\xe0fake jpeg bytes", caption="what is this?", chat_id=OWNER, user_id=OWNER)
    await telegram.wait_for_sent(1)
    content = fake_llm.requests[0]["messages"][-1]["content"]
    assert content[0]["type"] == "text" and "what is this?" in content[0]["text"]
    assert content[1]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    assert list((bot.config.workspace / "inbox" / "telegram" / str(OWNER)).iterdir())


async def test_an_album_reaches_the_model_as_one_turn_with_every_image(
    bot: TelegramBot, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    telegram.album([b"\xff\xd8 one", b"\xff\xd8 two"], ["compare these two"], chat_id=OWNER, user_id=OWNER)
    (sent,) = await telegram.wait_for_sent(1)
    (request,) = fake_llm.requests
    content = request["messages"][-1]["content"]
    assert "compare these two" in content[0]["text"]
    assert [part["type"] for part in content[1:]] == ["image_url", "image_url"]


async def test_voice_note_is_announced(bot: TelegramBot, fake_llm: FakeLLM, telegram: FakeTelegram) -> None:
    telegram.voice(b"OggS voice", chat_id=OWNER, user_id=OWNER)
    await telegram.wait_for_sent(1)
    assert "voice message arrived" in fake_llm.requests[0]["messages"][-1]["content"]


async def test_typing_shows_while_the_turn_runs(tmp_path: Path, telegram: FakeTelegram) -> None:
    async with FakeLLM(latency=0.3) as slow_llm, TelegramBot(tmp_path, slow_llm, telegram):
        telegram.text("think hard", chat_id=OWNER, user_id=OWNER)
        await telegram.wait_for_sent(1)
    assert telegram.chat_actions[0]["action"] == "typing"


async def test_start_command_greets_without_the_model(
    bot: TelegramBot, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    telegram.text("/start", chat_id=OWNER, user_id=OWNER)
    (sent,) = await telegram.wait_for_sent(1)
    assert "/help" in sent["text"] and fake_llm.requests == []


async def test_api_down_at_start_connects_once_it_is_back(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    telegram.down = True
    async with TelegramBot(tmp_path, fake_llm, telegram) as bot:
        await telegram.wait_for_call("getMe", 2)
        telegram.down = False
        await bot.gateway.manager.ready("telegram")
        telegram.text("are you up?", chat_id=OWNER, user_id=OWNER)
        (sent,) = await telegram.wait_for_sent(1)
    assert sent["text"].endswith("are you up?")


async def test_polling_recovers_after_an_outage(bot: TelegramBot, fake_llm: FakeLLM, telegram: FakeTelegram) -> None:
    polls = sum(1 for method, _ in telegram.calls if method == "getUpdates")
    telegram.down = True
    await telegram.wait_for_call("getUpdates", polls + 2)
    telegram.down = False
    telegram.text("back again?", chat_id=OWNER, user_id=OWNER)
    (sent,) = await telegram.wait_for_sent(1, timeout=30)
    assert sent["text"].endswith("back again?")


async def test_both_bot_api_clients_share_one_tls_context(
    tmp_path: Path, telegram: FakeTelegram, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[ssl.SSLContext] = []
    create = ssl.create_default_context

    def counted(*args: Any, **kwargs: Any) -> ssl.SSLContext:
        made.append(create(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(ssl, "create_default_context", counted)
    client_context.cache_clear()
    section = TelegramConfig(enabled=True, token=telegram.token, api_base=telegram.base_url)
    channel = TelegramChannel(publish_nothing, section, tmp_path)
    await channel.start()
    try:
        await telegram.wait_for_call("getUpdates")
    finally:
        await channel.stop()
    assert len(made) == 1


async def publish_nothing(message: InboundMessage) -> None:
    """A channel's publish callable for tests that send it nothing."""

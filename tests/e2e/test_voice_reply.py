"""Issue 40 on Telegram, end to end: a voice note gets text and a voice note back (metered); text without a model."""

from pathlib import Path

import pytest

from bot.llm.keys import PLACEHOLDER_KEY
from tests.fakes.openai_server import FakeLLM, Text
from tests.fakes.telegram_server import FakeTelegram, Upload
from tests.support.gateway import OWNER, TelegramBot

SPOKEN = {"transcription_model": "openai/whisper-1"}


def voice(**settings: object) -> dict[str, object]:
    return {"tts_model": "openai/gpt-4o-mini-tts", **settings}


async def test_a_voice_note_gets_a_voice_note_back_with_the_text(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    async with TelegramBot(tmp_path, fake_llm, telegram, llm=SPOKEN, voice=voice()) as bot:
        fake_llm.script(Text("It is sunny today."))
        telegram.voice(b"OggS user voice", chat_id=OWNER, user_id=OWNER)
        await telegram.wait_until(lambda: any("voice" in s for s in telegram.sent), "a voice note", timeout=30)
        rows = [row for row in bot.gateway.agent.ledger.calls() if row.purpose == "speech"]
    text = [s["text"] for s in telegram.sent if "text" in s]
    (spoken,) = [s["voice"] for s in telegram.sent if "voice" in s]
    assert text == ["It is sunny today."]
    assert isinstance(spoken, Upload) and spoken.content == fake_llm.speech
    (asked,) = fake_llm.speech_requests
    assert asked["input"] == "It is sunny today." and asked["model"] == "gpt-4o-mini-tts"
    assert asked["response_format"] == "opus" and asked["voice"] == "alloy"
    assert [(row.model, row.sender, row.outcome) for row in rows] == [
        ("openai/gpt-4o-mini-tts", f"telegram:{OWNER}", "ok")
    ]


async def test_a_typed_message_is_answered_in_text_alone_unless_always(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    async with TelegramBot(tmp_path, fake_llm, telegram, voice=voice()):
        telegram.text("hello", chat_id=OWNER, user_id=OWNER)
        await telegram.wait_for_sent(1, timeout=30)
    assert fake_llm.speech_requests == []
    async with TelegramBot(tmp_path, fake_llm, telegram, voice=voice(reply="always")):
        telegram.text("hello again", chat_id=OWNER, user_id=OWNER)
        await telegram.wait_until(lambda: any("voice" in s for s in telegram.sent), "a voice note", timeout=30)
    (asked,) = fake_llm.speech_requests
    assert asked["input"].startswith("echo: ") and "hello again" in asked["input"]


@pytest.mark.parametrize("settings", [{}, {"voice": {"reply": "never", "tts_model": "openai/tts-1"}}])
async def test_without_a_tts_model_or_with_never_the_reply_is_text(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, settings: dict[str, object]
) -> None:
    async with TelegramBot(tmp_path, fake_llm, telegram, llm=SPOKEN, **settings):
        fake_llm.script(Text("Only words."))
        telegram.voice(b"OggS user voice", chat_id=OWNER, user_id=OWNER)
        await telegram.wait_until(
            lambda: any(s.get("text") == "Only words." for s in telegram.sent), "the reply", timeout=30
        )
    assert fake_llm.speech_requests == [] and not any("voice" in s for s in telegram.sent)


async def test_a_tts_server_of_its_own_gets_neither_the_environments_key_nor_the_llms(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-shell")
    async with FakeLLM() as speaker:
        settings = voice(tts_api_base=speaker.base_url, reply="always")
        async with TelegramBot(tmp_path, fake_llm, telegram, voice=settings):
            telegram.text("hi", chat_id=OWNER, user_id=OWNER)
            await telegram.wait_until(lambda: any("voice" in s for s in telegram.sent), "a voice note", timeout=30)
    (headers,) = speaker.speech_headers
    assert headers.get("Authorization") == f"Bearer {PLACEHOLDER_KEY}"

"""Voice in: a Telegram voice note reaches the model as its transcript, through litellm and a fake endpoint."""

from pathlib import Path

from bot.bus import Attachment, ChatRef, InboundMessage
from bot.llm.transcription import VOICE_NOTE, note_voice
from tests.fakes.openai_server import FakeLLM, Text
from tests.fakes.telegram_server import FakeTelegram
from tests.support.gateway import OWNER, TelegramBot

OGG = b"OggS\x00\x02fake-opus-audio"


def last_user_text(fake_llm: FakeLLM) -> str:
    content = fake_llm.requests[-1]["messages"][-1]["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


async def test_voice_note_is_transcribed_for_the_model(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    fake_llm.transcript = "please remind me to water the plants"
    fake_llm.script(Text("Will do."))
    llm = {"transcription_model": "openai/whisper-1"}
    async with TelegramBot(tmp_path, fake_llm, telegram, {"streaming": "off"}, llm=llm) as bot:
        await bot.gateway.manager.ready("telegram")
        telegram.voice(OGG, chat_id=OWNER, user_id=OWNER)
        await telegram.wait_for_sent(1)
        ledger = bot.gateway.agent.ledger
        rows = [(c.purpose, c.sender, c.model, c.outcome) for c in ledger.calls()]
    assert rows[0] == ("transcription", f"telegram:{OWNER}", "openai/whisper-1", "ok")
    assert [purpose for purpose, *_ in rows] == ["transcription", "chat"]
    (heard,) = fake_llm.transcriptions
    assert heard["model"] == "whisper-1" and heard["bytes"] == OGG
    text = last_user_text(fake_llm)
    assert "[voice message] please remind me to water the plants" in text
    assert "transcription is not available" not in text


async def test_without_a_transcription_model_the_note_stays(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    fake_llm.script(Text("I can't listen yet."))
    async with TelegramBot(tmp_path, fake_llm, telegram, {"streaming": "off"}) as bot:
        await bot.gateway.manager.ready("telegram")
        telegram.voice(OGG, chat_id=OWNER, user_id=OWNER)
        await telegram.wait_for_sent(1)
    assert fake_llm.transcriptions == []
    assert "transcription is not available" in last_user_text(fake_llm)


def test_with_no_transcriber_each_voice_note_is_announced_in_the_text() -> None:
    voice = Attachment("/media/v.oga", "audio/ogg", "voice")
    song = Attachment("/media/song.mp3", "audio/mpeg", "file")
    message = InboundMessage(ChatRef("telegram", "1"), "1", "listen", attachments=(voice, song, voice))
    assert note_voice(message).text.splitlines() == ["listen", VOICE_NOTE, VOICE_NOTE]


def test_a_message_without_voice_notes_is_left_as_it_is() -> None:
    message = InboundMessage(
        ChatRef("telegram", "1"), "1", "look", attachments=(Attachment("/p.png", "image/png", "image"),)
    )
    assert note_voice(message) is message

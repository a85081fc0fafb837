"""Spoken replies: which turns are spoken, and a failing or over-budget speech model leaves the text reply alone."""

from pathlib import Path

import pytest

from bot.agent.voice_reply import VoiceReplies
from bot.app.channel_kinds import upload_limits
from bot.bus import Attachment, ChatRef, InboundMessage, OutboundMessage
from bot.errors import BudgetExceeded, ProviderError
from bot.llm.speech import Speech

CHAT = ChatRef("telegram", "5")
VOICE_NOTE = InboundMessage(CHAT, "5", "", attachments=(Attachment("/in.oga", "audio/ogg", "voice"),))
TYPED = InboundMessage(CHAT, "5", "hello")


class Speaker:
    model = "tts"

    def __init__(self, failure: Exception | None = None) -> None:
        self.failure = failure
        self.spoken: list[str] = []

    async def speak(self, text: str) -> Speech:
        if self.failure is not None:
            raise self.failure
        self.spoken.append(text)
        return Speech(b"OggS")


def replies(tmp_path: Path, mode: str, speaker: Speaker, sent: list[OutboundMessage]) -> VoiceReplies:
    async def publish(message: OutboundMessage) -> None:
        sent.append(message)

    return VoiceReplies(mode, speaker, tmp_path, publish, upload_limits())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("mode", "batch", "spoken"),
    [("auto", [VOICE_NOTE], True), ("auto", [TYPED], False), ("always", [TYPED], True), ("never", [VOICE_NOTE], False)],
)
async def test_which_turns_are_spoken(tmp_path: Path, mode: str, batch: list[InboundMessage], spoken: bool) -> None:
    sent: list[OutboundMessage] = []
    await replies(tmp_path, mode, Speaker(), sent).reply(batch, "Sunny.")
    assert [m.files[0].kind for m in sent] == (["voice"] if spoken else [])
    if spoken:
        assert Path(sent[0].files[0].path).read_bytes() == b"OggS" and sent[0].in_reply_to == batch[-1].id


@pytest.mark.parametrize("failure", [ProviderError("down"), BudgetExceeded("used up"), OSError("disk")])
async def test_a_failed_speech_sends_nothing_more(tmp_path: Path, failure: Exception) -> None:
    sent: list[OutboundMessage] = []
    await replies(tmp_path, "always", Speaker(failure), sent).reply([TYPED], "Sunny.")
    assert sent == []


async def test_a_chat_that_takes_no_files_gets_the_text_alone(tmp_path: Path) -> None:
    sent: list[OutboundMessage] = []
    speaker = Speaker()
    await replies(tmp_path, "always", speaker, sent).reply(
        [InboundMessage(ChatRef("console", "local"), "me", "hi")], "Hi."
    )
    assert sent == [] and speaker.spoken == []

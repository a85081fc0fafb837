"""Voice in: voice notes and audio files transcribed through litellm, so the model reads what was said."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from bot.bus import Attachment, InboundMessage
from bot.config.schema import LLMConfig
from bot.llm.keys import call_key, inherited_key
from bot.llm.transports.litellm_loader import import_litellm

logger = logging.getLogger(__name__)

VOICE_NOTE = "[a voice message arrived; transcription is not available yet]"
UNREADABLE = "[a voice message arrived but could not be transcribed]"


def is_audio(attachment: Attachment) -> bool:
    """Voice notes and audio files."""
    return attachment.kind == "voice" or attachment.mime_type.lower().startswith("audio/")


def note_voice(message: InboundMessage) -> InboundMessage:
    """The message with a note per voice attachment, for turns with no transcriber: the model learns one arrived."""
    notes = [VOICE_NOTE for attachment in message.attachments if attachment.kind == "voice"]
    if not notes:
        return message
    return replace(message, text="\n".join([message.text, *notes]).strip())


@dataclass(frozen=True, slots=True)
class Transcript:
    """What was said in an audio file, and the provider's price for hearing it (None when it gave none)."""

    text: str
    cost: float | None = None


class SpeechToText(Protocol):
    """Anything that turns an audio file into text with one model (metered by `bot.usage.metered_speech`)."""

    model: str

    async def transcribe(self, path: Path) -> Transcript: ...


class SpeechModel:
    """Speech to text with `llm.transcription_model` through litellm; its API base defaults to `llm.api_base`, its
    key to `llm.api_key` where the base does (see `bot.llm.keys` for the environment)."""

    def __init__(self, config: LLMConfig) -> None:
        if not config.transcription_model:
            raise ValueError("llm.transcription_model is not set")
        self.model = config.transcription_model
        self._api_base = config.transcription_api_base or config.api_base
        own_key = config.transcription_api_key.get_secret_value()
        key = inherited_key(own_key, config.transcription_api_base, config.api_key.get_secret_value(), config.api_base)
        self._api_key = call_key(self.model, key, self._api_base)
        self._timeout = config.timeout

    async def transcribe(self, path: Path) -> Transcript:
        """The text spoken in an audio file."""
        litellm = import_litellm()
        options: dict[str, object] = {"model": self.model, "timeout": self._timeout}
        if self._api_base:
            options["api_base"] = self._api_base
        if self._api_key:
            options["api_key"] = self._api_key
        with path.open("rb") as audio:
            response = await litellm.atranscription(file=audio, **options)
        cost = (getattr(response, "_hidden_params", None) or {}).get("response_cost")
        return Transcript(str(response.text or "").strip(), float(cost) if cost is not None else None)


class Transcriber:
    """Puts what was said into a message in place of its voice note."""

    def __init__(self, speech: SpeechToText) -> None:
        self._speech = speech

    async def apply(self, message: InboundMessage) -> InboundMessage:
        """The message with each audio attachment's transcript added to its text as `[voice message] <text>`."""
        audio = [a for a in message.attachments if is_audio(a)]
        if not audio:
            return message
        lines = []
        for attachment in audio:
            try:
                transcript = await self._speech.transcribe(Path(attachment.path))
                lines.append(f"[voice message] {transcript.text}")
            except Exception as exc:  # any provider or file failure: the turn goes on with a note
                logger.warning("[%s] transcription failed: %s: %s", message.chat.session_key, type(exc).__name__, exc)
                lines.append(UNREADABLE)
        return replace(message, text="\n".join([message.text, *lines]).strip())

"""Voice out: a reply spoken through litellm's speech endpoint (`voice.tts_model`), as Ogg/Opus for voice notes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from bot.llm.keys import call_key
from bot.llm.transports.litellm_loader import import_litellm


@dataclass(frozen=True, slots=True)
class Speech:
    """Spoken audio, its type and the provider's price for it (None when it gave none)."""

    data: bytes
    mime_type: str = "audio/ogg"
    cost: float | None = None


class TextToSpeech(Protocol):
    """Anything that speaks text with one model (metered by `bot.usage.metered_voice`)."""

    model: str

    async def speak(self, text: str) -> Speech: ...


class SpeechSynthesis:
    """Text to speech with litellm's `aspeech`; an api_base elsewhere gets only a key the config names
    (`bot.llm.keys`), never one from the environment."""

    def __init__(
        self, model: str, voice: str, api_base: str | None, api_key: str, timeout: float, max_chars: int
    ) -> None:
        self.model = model
        self._voice = voice
        self._api_base = api_base
        self._api_key = call_key(model, api_key, api_base)
        self._timeout = timeout
        self._max_chars = max_chars

    async def speak(self, text: str) -> Speech:
        """The text (up to `max_chars`) spoken as Ogg/Opus."""
        litellm = import_litellm()
        options: dict[str, object] = {"model": self.model, "voice": self._voice, "timeout": self._timeout}
        if self._api_base:
            options["api_base"] = self._api_base
        if self._api_key:
            options["api_key"] = self._api_key
        response = await litellm.aspeech(input=text[: self._max_chars], response_format="opus", **options)
        cost = (getattr(response, "_hidden_params", None) or {}).get("response_cost")
        return Speech(bytes(response.content), "audio/ogg", float(cost) if cost is not None else None)

"""The `voice` section: when a reply is also spoken, and with which text-to-speech model."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr

from bot.config.durations import Duration
from bot.config.section import Section


class VoiceConfig(Section):
    """Spoken replies: after a voice note (`auto`), to every message (`always`) or `never`; text without a model."""

    reply: Literal["auto", "always", "never"] = "auto"
    tts_model: str | None = None
    tts_voice: str = "alloy"
    tts_api_base: str | None = None
    tts_api_key: SecretStr = SecretStr("")
    max_chars: int = Field(default=4000, gt=0)
    timeout: Duration = Field(default=60.0, gt=0)

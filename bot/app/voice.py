"""Spoken replies for a config: `voice.tts_model` metered; its base and key follow `bot.llm.keys`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from bot.agent.voice_reply import VoiceReplies
from bot.app.channel_kinds import upload_limits
from bot.bus import OutboundMessage
from bot.config.schema import Config
from bot.llm.keys import inherited_key
from bot.llm.speech import SpeechSynthesis
from bot.tools.chat_files import ChatFiles
from bot.usage.budgets import BudgetGuard
from bot.usage.ledger import Ledger
from bot.usage.metered_voice import MeteredVoice


def voice_replies(
    config: Config,
    ledger: Ledger,
    guard: BudgetGuard | None,
    publish: Callable[[OutboundMessage], Awaitable[object]],
    files: ChatFiles | None = None,
) -> VoiceReplies | None:
    """Spoken replies as `voice` says, or None (replies stay text) without a TTS model or with `reply: never`."""
    voice = config.voice
    if not voice.tts_model or voice.reply == "never":
        return None
    own_key = voice.tts_api_key.get_secret_value()
    api_key = inherited_key(own_key, voice.tts_api_base, config.llm.api_key.get_secret_value(), config.llm.api_base)
    api_base = voice.tts_api_base or config.llm.api_base
    speech = SpeechSynthesis(voice.tts_model, voice.tts_voice, api_base, api_key, voice.timeout, voice.max_chars)
    metered = MeteredVoice(speech, ledger, guard)
    return VoiceReplies(voice.reply, metered, config.workspace, publish, upload_limits(), files)

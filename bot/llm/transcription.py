"""Voice in: voice notes and audio files transcribed through litellm, so the model reads what was said."""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from pathlib import Path

from bot.bus import Attachment, InboundMessage
from bot.config import LLMConfig
from bot.usage.budgets import BudgetGuard
from bot.usage.charge import current_charge
from bot.usage.ledger import CallRecord, Ledger

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


class Transcriber:
    """Speech to text with `llm.transcription_model`; its API base and key default to the llm ones.

    With a ledger, each call is one row of purpose `transcription`, charged like the turn it serves and
    checked against that sender's budget first.
    """

    def __init__(self, config: LLMConfig, ledger: Ledger | None = None, guard: BudgetGuard | None = None) -> None:
        if not config.transcription_model:
            raise ValueError("llm.transcription_model is not set")
        self.model = config.transcription_model
        self._api_base = config.transcription_api_base or config.api_base
        self._api_key = config.transcription_api_key.get_secret_value() or config.api_key.get_secret_value()
        self._timeout = config.timeout
        self._ledger = ledger
        self._guard = guard

    async def transcribe(self, path: Path) -> str:
        """The text spoken in an audio file."""
        from bot.llm import import_litellm

        litellm = import_litellm()
        options: dict[str, object] = {"model": self.model, "timeout": self._timeout}
        if self._api_base:
            options["api_base"] = self._api_base
        if self._api_key:
            options["api_key"] = self._api_key
        charge = replace(current_charge(), purpose="transcription")
        if self._guard is not None:
            self._guard.check(charge)
        started, outcome, cost = time.perf_counter(), "ok", None
        try:
            with path.open("rb") as audio:
                response = await litellm.atranscription(file=audio, **options)
            cost = (getattr(response, "_hidden_params", None) or {}).get("response_cost")
            return str(response.text or "").strip()
        except BaseException as exc:
            outcome = type(exc).__name__
            raise
        finally:
            if self._ledger is not None:
                self._ledger.record(
                    CallRecord(
                        ts=time.time(),
                        session_key=charge.session_key,
                        sender=charge.sender,
                        purpose="transcription",
                        model=self.model,
                        prompt_tokens=0,
                        completion_tokens=0,
                        cached_tokens=0,
                        cost_usd=float(cost) if cost is not None else None,
                        estimated=True,
                        latency=time.perf_counter() - started,
                        outcome=outcome,
                    )
                )

    async def apply(self, message: InboundMessage) -> InboundMessage:
        """The message with each audio attachment's transcript added to its text as `[voice message] <text>`."""
        audio = [a for a in message.attachments if is_audio(a)]
        if not audio:
            return message
        lines = []
        for attachment in audio:
            try:
                lines.append(f"[voice message] {await self.transcribe(Path(attachment.path))}")
            except Exception as exc:  # any provider or file failure: the turn goes on with a note
                logger.warning("[%s] transcription failed: %s: %s", message.chat.session_key, type(exc).__name__, exc)
                lines.append(UNREADABLE)
        return replace(message, text="\n".join([message.text, *lines]).strip())

"""Voice answered with voice: after the text reply, the same reply spoken (a voice note where there are any)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Literal

from bot.bus import Attachment, InboundMessage, OutboundMessage
from bot.errors import BudgetExceeded, ProviderError
from bot.llm.speech import TextToSpeech
from bot.memory.files import scope_for
from bot.tools.chat_files import ChatFiles
from bot.tools.outbox_files import save_to_outbox
from bot.tools.uploads import UploadLimits
from bot.usage.charge import charge_for, charged_to

logger = logging.getLogger(__name__)

ReplyMode = Literal["auto", "always", "never"]


class VoiceReplies:
    """Speaks a turn's reply when `mode` says so: `auto` after a voice note, `always`, or `never`."""

    def __init__(
        self,
        mode: ReplyMode,
        speech: TextToSpeech,
        workspace: Path,
        publish: Callable[[OutboundMessage], Awaitable[object]],
        uploads: UploadLimits,
        files: ChatFiles | None = None,
    ) -> None:
        self._mode = mode
        self._uploads = uploads
        self._speech = speech
        self._workspace = workspace
        self._publish = publish
        self._files = files

    def wanted(self, batch: Sequence[InboundMessage]) -> bool:
        """Whether the turn answering `batch` is spoken too."""
        if self._mode == "always":
            return True
        return self._mode == "auto" and any(a.kind == "voice" for m in batch for a in m.attachments)

    async def reply(self, batch: Sequence[InboundMessage], text: str) -> None:
        """Send `text` spoken to the batch's chat; a failure is logged and the text reply stands alone."""
        message = batch[-1]
        if not self.wanted(batch) or not text.strip() or not self._uploads.takes_files(message.chat):
            return  # nothing to say, or a chat that takes no files (the terminal): the text is the whole reply
        try:
            with charged_to(charge_for(message)):
                speech = await self._speech.speak(text)
            path = await asyncio.to_thread(save_to_outbox, self._workspace, message.chat, "voice", ".ogg", speech.data)
            if self._files is not None:
                scope = scope_for(self._workspace, message).directory
                await asyncio.to_thread(self._files.register, scope, message.chat, path, None, speech.mime_type, "made")
            voice = Attachment(str(path), speech.mime_type, "voice")
            await self._publish(
                OutboundMessage(message.chat, "", in_reply_to=message.id, id=f"{message.id}:voice", files=(voice,))
            )
        except BudgetExceeded as exc:
            logger.info("[%s] reply not spoken: %s", message.chat.session_key, exc)
        except ProviderError as exc:
            logger.warning("[%s] reply not spoken: %s", message.chat.session_key, exc)
        except Exception:  # any speech or file failure: the text reply already went out
            logger.exception("[%s] speaking the reply failed", message.chat.session_key)

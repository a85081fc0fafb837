"""Delivering an OutboundMessage on Signal: markdown as text styles, split at 2,000 characters, files as data URIs,
quotes as replies, choices as numbered lines."""

from __future__ import annotations

import base64
import mimetypes
from dataclasses import replace
from pathlib import Path
from typing import Any

from bot.bus import Attachment, OutboundMessage
from bot.errors import ChannelUnavailable
from bot.retry import RetryPolicy
from channels.delivery import send_in_chunks
from channels.numbered import NumberedChoices
from channels.signal.calls import SignalRpc
from channels.signal.markup import markdown_to_signal
from channels.signal.parse import author_and_timestamp, target

MAX_MESSAGE_LENGTH = 2000  # longer texts travel as an attachment Signal's apps show as "read more"


def data_uri(file: Attachment) -> str:
    """A file as the data URI signal-cli takes in `attachments` (the daemon need not see relaybot's disk)."""
    path = Path(file.path)
    mime = file.mime_type or mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    encoded = base64.b64encode(path.read_bytes()).decode()
    return f"data:{mime};filename={file.name or path.name};base64,{encoded}"


class SignalSender:
    """Sends one account's outbound messages; numbered choices are remembered so a typed number presses one."""

    def __init__(self, rpc: SignalRpc, retry: RetryPolicy, choices: NumberedChoices) -> None:
        self._rpc = rpc
        self._retry = retry
        self._choices = choices

    async def send(self, message: OutboundMessage) -> None:
        """Files go with the first part of the text; a reply quotes the message it answers."""
        text = self._choices.shown(message)
        attachments = [data_uri(file) for file in message.files]
        if not text.strip():
            if attachments:
                await self._retry.run(
                    lambda: self._post(message, "", attachments),
                    f"[{message.chat.session_key}] send",
                    (ChannelUnavailable,),
                )
            return

        async def post(chunk: str, as_markup: bool, first: bool) -> None:
            shown, styles = markdown_to_signal(chunk) if as_markup else (chunk, [])
            await self._post(message, shown, attachments if first else [], first, styles)

        await send_in_chunks(replace(message, text=text), MAX_MESSAGE_LENGTH, str, post, self._retry)

    async def _post(
        self,
        message: OutboundMessage,
        text: str,
        attachments: list[str],
        first: bool = True,
        styles: list[str] | None = None,
    ) -> None:
        params: dict[str, Any] = {**target(message.chat.chat_id), "message": text}
        if attachments:
            params["attachments"] = attachments
        if styles:
            params["textStyle"] = styles
        quoted = author_and_timestamp(message.reply_to_platform_id or "") if first else None
        if quoted is not None and message.kind == "reply":
            params["quoteAuthor"], params["quoteTimestamp"] = quoted
        await self._rpc.call("send", **params)

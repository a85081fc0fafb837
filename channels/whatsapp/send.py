"""Delivering an OutboundMessage on WhatsApp: text chunks, files, reply buttons or a list, the template fallback."""

from __future__ import annotations

import logging
import mimetypes
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from bot.bus import Choice, OutboundMessage
from bot.config.channels.whatsapp import WhatsAppTemplate
from bot.errors import ChannelUnavailable, WindowClosed
from bot.retry import RetryPolicy
from channels.delivery import send_in_chunks
from channels.numbered import numbered_text
from channels.whatsapp.calls import GraphApi
from channels.whatsapp.markup import markdown_to_whatsapp
from channels.whatsapp.parse import choice_id

logger = logging.getLogger(__name__)

MAX_MESSAGE_LENGTH = 4096
BODY_LIMIT = 1024  # interactive bodies and media captions
MAX_BUTTONS, BUTTON_TITLE = 3, 20
MAX_ROWS, ROW_TITLE, LIST_BUTTON = 10, 24, "Choose"
Sent = Callable[[str, str], None]
"""sent(message id, text): told of each message the bot sent, so a user's quote of it can be read."""


class WhatsAppSender:
    """Sends one number's outbound messages; outside the 24-hour window, the configured template instead."""

    def __init__(self, graph: GraphApi, retry: RetryPolicy, template: WhatsAppTemplate | None, sent: Sent) -> None:
        self._graph = graph
        self._retry = retry
        self._template = template
        self._sent = sent

    async def send(self, message: OutboundMessage) -> None:
        """Files, then text, then buttons; WindowClosed sends the template, or propagates when there is none."""
        try:
            await self._deliver(message)
        except WindowClosed as exc:
            key = message.chat.session_key
            if self._template is None:
                logger.warning("[%s] outside WhatsApp's 24-hour window (%s); no template configured", key, exc)
                raise
            logger.warning(
                "[%s] outside WhatsApp's 24-hour window (%s); sending template %r instead",
                key,
                exc,
                self._template.name,
            )
            template = {"name": self._template.name, "language": {"code": self._template.language}}
            await self._post(message, {"type": "template", "template": template}, f"[template {self._template.name}]")

    async def _deliver(self, message: OutboundMessage) -> None:
        text = markdown_to_whatsapp(message.text)
        for index, file in enumerate(message.files):
            caption = text if index == 0 and len(text) <= BODY_LIMIT and not message.choices else ""
            await self._send_file(message, Path(file.path), file.mime_type, caption)
            text = "" if caption else text
        body = text if 0 < len(text) <= BODY_LIMIT else "Choose one:"
        interactive = _interactive(message, body) if message.choices else None
        if message.choices and interactive is None:
            text = markdown_to_whatsapp(numbered_text(message))  # more choices than a list holds
        elif interactive is not None and body == text:
            text = ""  # the buttons' body carries it
        if text.strip():
            await send_in_chunks(
                replace(message, text=text), MAX_MESSAGE_LENGTH, str, partial(self._post_text, message), self._retry
            )
        if interactive is not None:
            await self._post(message, {"type": "interactive", "interactive": interactive}, body)

    async def _post_text(self, message: OutboundMessage, text: str, as_markup: bool, first: bool) -> None:
        await self._post(message, {"type": "text", "text": {"body": text, "preview_url": False}}, text, first)

    async def _send_file(self, message: OutboundMessage, path: Path, mime_type: str, caption: str) -> None:
        mime = mime_type or mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        media_id = await self._graph.upload(path.read_bytes(), path.name, mime)
        kind = next((k for k in ("image", "audio", "video") if mime.startswith(f"{k}/")), "document")
        part: dict[str, Any] = {"id": media_id}
        if caption and kind != "audio":
            part["caption"] = caption
        if kind == "document":
            part["filename"] = path.name
        await self._post(message, {"type": kind, kind: part}, caption or f"[{path.name}]")

    async def _post(self, message: OutboundMessage, payload: dict[str, Any], text: str, first: bool = True) -> None:
        body = {"to": message.chat.chat_id, **payload}
        if first and message.kind == "reply" and message.reply_to_platform_id:
            body["context"] = {"message_id": message.reply_to_platform_id}
        what = f"[{message.chat.session_key}] send {message.id}"
        answer = await self._retry.run(partial(self._graph.message, body), what, (ChannelUnavailable,))
        for sent in answer.get("messages") or []:
            self._sent(str(sent["id"]), text)


def _interactive(message: OutboundMessage, body: str) -> dict[str, Any] | None:
    """Reply buttons (up to 3) or a list (up to 10 rows) for the message's choices; None when there are more."""
    choices = message.choices
    if len(choices) <= MAX_BUTTONS:
        buttons = [
            {"type": "reply", "reply": {"id": choice_id(message.prompt_id, c.id), "title": _cut(c, BUTTON_TITLE)}}
            for c in choices
        ]
        return {"type": "button", "body": {"text": body}, "action": {"buttons": buttons}}
    if len(choices) <= MAX_ROWS:
        rows = [{"id": choice_id(message.prompt_id, c.id), "title": _cut(c, ROW_TITLE)} for c in choices]
        action = {"button": LIST_BUTTON, "sections": [{"title": LIST_BUTTON, "rows": rows}]}
        return {"type": "list", "body": {"text": body}, "action": action}
    return None


def _cut(choice: Choice, limit: int) -> str:
    return choice.label if len(choice.label) <= limit else choice.label[: limit - 1] + "…"

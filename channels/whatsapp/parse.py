"""WhatsApp webhook payloads, pure: the signature, the verification handshake, messages to bus messages."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.bus import ChatRef, InboundMessage, Press, Quote
from channels.media import MediaRef, kind_of

CHANNEL = "whatsapp"
MEDIA_TYPES = ("image", "document", "audio", "video", "sticker")
CHOICE_PREFIX = "rb|"
"""Starts the id of every button or list row relaybot renders: `rb|<prompt id>|<choice id>`."""


class MalformedEvent(ValueError):
    """A webhook body that is not the Cloud API's shape; the message says what is wrong."""


@dataclass(frozen=True, slots=True)
class Incoming:
    """One user message from a webhook: the bus message and the files it carries, not yet downloaded."""

    message: InboundMessage
    media: tuple[MediaRef, ...] = ()


@dataclass(frozen=True, slots=True)
class Status:
    """A delivery status of one of the bot's messages (`sent`, `delivered`, `read`, `failed`) and its error codes."""

    message_id: str
    status: str
    recipient: str
    error_codes: tuple[int, ...] = ()


def signature_ok(app_secret: str, body: bytes, header: str | None) -> bool:
    """Whether `X-Hub-Signature-256` is `sha256=` + HMAC-SHA256(app secret, the raw body), compared in constant time."""
    if not header or not header.startswith("sha256=") or not app_secret:
        return False
    expected = hmac.new(app_secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, header.removeprefix("sha256="))


def handshake(query: Mapping[str, str], verify_token: str) -> str | None:
    """The challenge to echo for a subscription check whose token matches; None refuses it."""
    token = query.get("hub.verify_token", "")
    if query.get("hub.mode") != "subscribe" or not verify_token or not hmac.compare_digest(token, verify_token):
        return None
    return query.get("hub.challenge", "")


def parse_webhook(body: bytes, phone_number_id: str) -> tuple[list[Incoming], list[Status]]:
    """The user messages and statuses of one webhook body for our number; raise MalformedEvent when it is not one."""
    try:
        payload = json.loads(body)
    except ValueError as exc:
        raise MalformedEvent("body is not JSON") from exc
    if not isinstance(payload, dict) or payload.get("object") != "whatsapp_business_account":
        raise MalformedEvent("object is not whatsapp_business_account")
    messages: list[Incoming] = []
    statuses: list[Status] = []
    try:
        for entry in payload["entry"]:
            for change in entry["changes"]:
                value = change["value"]
                if change.get("field") != "messages" or value["metadata"]["phone_number_id"] != phone_number_id:
                    continue
                names = {c["wa_id"]: (c.get("profile") or {}).get("name") for c in value.get("contacts") or []}
                messages.extend(
                    found
                    for raw in value.get("messages") or []
                    if (found := parse_message(raw, names.get(raw["from"]))) is not None
                )
                statuses.extend(_status(raw) for raw in value.get("statuses") or [])
    except (KeyError, TypeError, AttributeError) as exc:
        raise MalformedEvent(f"missing or mistyped field {exc}") from exc
    return messages, statuses


def parse_message(raw: dict[str, Any], sender_name: str | None) -> Incoming | None:
    """One entry of `messages[]` as an Incoming; None for kinds relaybot does not read (reactions, locations …)."""
    sender, message_id, kind = str(raw["from"]), str(raw["id"]), raw["type"]
    text, press = "", None
    media: tuple[MediaRef, ...] = ()
    if kind == "text":
        text = raw["text"]["body"]
    elif kind in MEDIA_TYPES:
        part = raw[kind]
        text = part.get("caption") or ""
        mime = part.get("mime_type") or "application/octet-stream"
        media_kind = "voice" if kind == "audio" and part.get("voice") else kind_of(mime)
        media = (MediaRef(part["id"], part["id"], media_kind, mime, None, part.get("filename")),)
    elif kind == "interactive":
        reply = raw["interactive"].get("button_reply") or raw["interactive"].get("list_reply") or {}
        text, press = reply.get("title") or "", _press_of(reply.get("id") or "", raw.get("context"))
        if not text:
            return None
    elif kind == "button":
        text = raw["button"].get("text") or ""
    else:
        return None
    if not text.strip() and not media:
        return None
    context = raw.get("context") or {}
    quoted = context.get("id") if press is None else None
    return Incoming(
        InboundMessage(
            chat=ChatRef(CHANNEL, sender),
            sender_id=sender,
            text=text,
            sender_name=sender_name or None,
            is_direct=True,
            mentioned=True,
            platform_message_id=message_id,
            reply_to=Quote("", platform_message_id=quoted) if quoted else None,
            press=press,
        ),
        media,
    )


def choice_id(prompt_id: str | None, choice: str) -> str:
    """The id a button or list row carries, so its press names the prompt and the choice."""
    return f"{CHOICE_PREFIX}{prompt_id or ''}|{choice}"


def _press_of(reply_id: str, context: dict[str, Any] | None) -> Press | None:
    if not reply_id.startswith(CHOICE_PREFIX):
        return None
    prompt, _, choice = reply_id.removeprefix(CHOICE_PREFIX).partition("|")
    return Press(prompt, choice, (context or {}).get("id"))


def _status(raw: dict[str, Any]) -> Status:
    codes = tuple(int(error["code"]) for error in raw.get("errors") or [] if "code" in error)
    return Status(str(raw["id"]), str(raw["status"]), str(raw.get("recipient_id", "")), codes)

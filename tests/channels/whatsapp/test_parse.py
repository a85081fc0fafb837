"""WhatsApp webhook bodies to bus messages, the signature and the handshake, without a network."""

import hashlib
import hmac
import json

import pytest

from bot.bus import ChatRef, Press
from channels.whatsapp.markup import markdown_to_whatsapp
from channels.whatsapp.parse import MalformedEvent, choice_id, handshake, parse_webhook, signature_ok

PHONE = "1055"


def body(*messages: dict, statuses: tuple[dict, ...] = (), phone: str = PHONE) -> bytes:
    value = {
        "metadata": {"phone_number_id": phone},
        "contacts": [{"profile": {"name": "Ann"}, "wa_id": "491"}],
        "messages": list(messages),
        "statuses": list(statuses),
    }
    entry = {"id": "W", "changes": [{"field": "messages", "value": value}]}
    return json.dumps({"object": "whatsapp_business_account", "entry": [entry]}).encode()


def text(body_text: str, **extra: object) -> dict:
    return {"from": "491", "id": "wamid.1", "timestamp": "1", "type": "text", "text": {"body": body_text}, **extra}


def test_signature_is_hmac_sha256_of_the_raw_body() -> None:
    raw = b'{"a": 1}'
    good = "sha256=" + hmac.new(b"secret", raw, hashlib.sha256).hexdigest()
    assert signature_ok("secret", raw, good)
    assert not signature_ok("secret", raw + b" ", good)
    assert not signature_ok("other", raw, good)
    assert not signature_ok("secret", raw, None)
    assert not signature_ok("secret", raw, good.removeprefix("sha256="))


def test_handshake_echoes_the_challenge_only_for_the_right_token() -> None:
    query = {"hub.mode": "subscribe", "hub.verify_token": "tok", "hub.challenge": "1158201444"}
    assert handshake(query, "tok") == "1158201444"
    assert handshake(query, "nope") is None
    assert handshake({**query, "hub.mode": "unsubscribe"}, "tok") is None
    assert handshake(query, "") is None


def test_text_message_becomes_a_direct_message_from_its_wa_id() -> None:
    (incoming,), statuses = parse_webhook(body(text("hi there")), PHONE)
    message = incoming.message
    assert message.chat == ChatRef("whatsapp", "491")
    assert (message.sender_id, message.sender_name, message.text) == ("491", "Ann", "hi there")
    assert message.is_direct and message.platform_message_id == "wamid.1" and statuses == []


def test_a_reply_carries_the_quoted_message_id() -> None:
    (incoming,), _ = parse_webhook(body(text("yes", context={"from": "1555", "id": "wamid.bot"})), PHONE)
    assert incoming.message.reply_to is not None
    assert incoming.message.reply_to.platform_message_id == "wamid.bot"


def test_image_with_caption_brings_its_media_id() -> None:
    image = {"id": "m1", "mime_type": "image/jpeg", "sha256": "x", "caption": "look"}
    (incoming,), _ = parse_webhook(body({"from": "491", "id": "w2", "type": "image", "image": image}), PHONE)
    assert incoming.message.text == "look"
    (media,) = incoming.media
    assert (media.source, media.kind, media.mime_type) == ("m1", "image", "image/jpeg")


def test_button_reply_is_a_press_of_the_prompt_it_names() -> None:
    reply = {"id": choice_id("p1", "yes"), "title": "Yes"}
    raw = {"type": "button_reply", "button_reply": reply}
    press = {"from": "491", "id": "w3", "type": "interactive", "interactive": raw, "context": {"id": "wamid.q"}}
    (incoming,), _ = parse_webhook(body(press), PHONE)
    assert incoming.message.text == "Yes"
    assert incoming.message.press == Press("p1", "yes", "wamid.q")
    assert incoming.message.reply_to is None


def test_list_reply_is_a_press_too() -> None:
    raw = {"type": "list_reply", "list_reply": {"id": choice_id("p2", "c|4"), "title": "Four"}}
    (incoming,), _ = parse_webhook(body({"from": "491", "id": "w4", "type": "interactive", "interactive": raw}), PHONE)
    assert incoming.message.press == Press("p2", "c|4", None)


def test_unread_kinds_and_other_numbers_are_skipped() -> None:
    reaction = {"from": "491", "id": "w5", "type": "reaction", "reaction": {"emoji": "👍", "message_id": "x"}}
    assert parse_webhook(body(reaction), PHONE) == ([], [])
    assert parse_webhook(body(text("hi"), phone="999"), PHONE) == ([], [])


def test_failed_status_keeps_its_error_codes() -> None:
    failed = {"id": "wamid.o", "status": "failed", "recipient_id": "491", "errors": [{"code": 131047}]}
    _, (status,) = parse_webhook(body(statuses=(failed,)), PHONE)
    assert (status.status, status.error_codes) == ("failed", (131047,))


@pytest.mark.parametrize(
    "raw",
    [
        b"not json",
        b'{"object": "page"}',
        b'{"object": "whatsapp_business_account"}',
        body({"from": "491", "type": "text", "text": {"body": "no id"}}),
    ],
)
def test_malformed_bodies_raise_malformed_event(raw: bytes) -> None:
    with pytest.raises(MalformedEvent):
        parse_webhook(raw, PHONE)


def test_markdown_becomes_whatsapp_markup_outside_code() -> None:
    source = "# Title\n**bold** and ~~gone~~, [docs](https://x.org)\n```\n**kept**\n```"
    assert markdown_to_whatsapp(source) == "*Title*\n*bold* and ~gone~, docs (https://x.org)\n```\n**kept**\n```"

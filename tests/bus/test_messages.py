"""Bus messages round-trip through JSON unchanged, nested chat and attachments included."""

from __future__ import annotations

import json
from dataclasses import asdict

from bot.bus import (
    Attachment,
    ChatRef,
    Choice,
    EarlierMessage,
    GroupLine,
    InboundMessage,
    OutboundMessage,
    Press,
    Quote,
    Trust,
)
from bot.bus.messages import inbound_from_json, inbound_to_json, outbound_from_json, outbound_to_json


def test_an_inbound_message_round_trips_with_its_attachments() -> None:
    photo = Attachment("/inbox/a.png", "image/png", "image")
    message = InboundMessage(ChatRef.parse("telegram:1:7"), "42", "look", Trust.OWNER, attachments=(photo,))
    text = inbound_to_json(message)
    assert json.loads(text) == json.loads(json.dumps(asdict(message)))
    assert inbound_from_json(text) == message


def test_a_system_message_keeps_its_origin_through_json() -> None:
    message = InboundMessage(ChatRef.parse("telegram:1"), "cron", "[scheduled job j1] hi", kind="system", origin="cron")
    assert inbound_from_json(inbound_to_json(message)).origin == "cron"


def test_a_journal_row_written_before_origin_existed_loads_as_a_user_message() -> None:
    row = json.loads(inbound_to_json(InboundMessage(ChatRef.parse("telegram:1"), "42", "hi")))
    del row["origin"]
    assert inbound_from_json(json.dumps(row)).origin == "user"


def test_an_outbound_message_round_trips_with_its_files() -> None:
    message = OutboundMessage(ChatRef.parse("slack:C1"), "here", in_reply_to="m1", files=(Attachment("/f", "a/b"),))
    text = outbound_to_json(message)
    assert json.loads(text) == json.loads(json.dumps(asdict(message)))
    assert outbound_from_json(text) == message


def test_a_reply_with_its_quote_group_context_and_press_round_trips() -> None:
    image = Attachment("/inbox/q.jpg", "image/jpeg", "image")
    message = InboundMessage(
        ChatRef.parse("discord:9"),
        "42",
        "what about this?",
        Trust.USER,
        reply_to=Quote("the quoted words", "7", "Bo", trust=Trust.ADMIN, image=image, platform_message_id="55"),
        context=(GroupLine("8", "Cy", "earlier", 1700000000.0, Trust.GUEST),),
        edit_of="54",
        press=Press("K7Q", "allow_once", "60"),
        conversation=(EarlierMessage("system", "be brief"), EarlierMessage("assistant", "hello")),
    )
    text = inbound_to_json(message)
    assert json.loads(text) == json.loads(json.dumps(asdict(message)))
    assert inbound_from_json(text) == message


def test_an_outbound_message_round_trips_with_its_choices() -> None:
    message = OutboundMessage(
        ChatRef.parse("telegram:1"),
        "Run `rm -r build`?",
        choices=(Choice("once", "Allow once", "primary"), Choice("deny", "Deny", "danger")),
        prompt_id="K7Q",
        edit_of="12",
        private_to="42",
    )
    assert outbound_from_json(outbound_to_json(message)) == message

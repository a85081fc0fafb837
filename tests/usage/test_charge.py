"""A turn is charged by its message's origin: a person's chat, a cron job's creator, or the heartbeat."""

from __future__ import annotations

from bot.bus import ChatRef, InboundMessage, Trust
from bot.usage.charge import Charge, charge_for

CHAT = ChatRef("telegram", "42")


def test_a_user_message_is_charged_to_its_sender() -> None:
    message = InboundMessage(CHAT, "42", "hi", Trust.USER)
    assert charge_for(message) == Charge("chat", CHAT, "telegram:42", Trust.USER)


def test_a_persons_message_is_charged_to_the_person_whichever_account_sent_it() -> None:
    message = InboundMessage(CHAT, "42", "hi", Trust.USER, person="alice")
    assert charge_for(message).sender == "alice"


def test_a_heartbeat_is_background_work_charged_to_no_sender() -> None:
    beat = InboundMessage(CHAT, "heartbeat", "tasks", Trust.OWNER, kind="system", origin="heartbeat")
    charge = charge_for(beat)
    assert charge == Charge("heartbeat", CHAT, None, Trust.OWNER) and charge.is_background


def test_a_cron_turn_is_charged_to_the_jobs_creator() -> None:
    job = InboundMessage(CHAT, "cron", "do it", Trust.USER, kind="system", charge_to="telegram:5", origin="cron")
    assert charge_for(job) == Charge("cron", CHAT, "telegram:5", Trust.USER)


def test_a_sub_agents_report_is_charged_as_chat_to_whoever_spawned_it() -> None:
    report = InboundMessage(
        CHAT, "subagent", "done", Trust.USER, kind="system", charge_to="telegram:5", origin="subagent"
    )
    assert charge_for(report) == Charge("chat", CHAT, "telegram:5", Trust.USER)


def test_origin_not_the_sender_id_decides_the_purpose() -> None:
    person = InboundMessage(ChatRef("telegram", "heartbeat"), "heartbeat", "hi", Trust.USER)
    assert charge_for(person).purpose == "chat"

"""The fake's interaction rules, as Discord enforces them: one answer per interaction, within 3 s."""

import itertools

import pytest

from tests.fakes import discord_payloads as payloads
from tests.fakes.discord_interactions import ACK_DEADLINE, InteractionDesk, InteractionError

BOT = payloads.user(900, "relay", bot=True)
USER = payloads.user(42, "ann")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def desk_with_command(clock: Clock) -> tuple[InteractionDesk, dict]:
    desk = InteractionDesk(BOT, itertools.count(1), {}, clock)
    channel = payloads.text_channel(5001, 5000, "general")
    return desk, desk.interaction(2, channel, 5000, USER, {"name": "help", "type": 1}, None)


def test_a_deferred_command_is_filled_by_its_first_follow_up() -> None:
    desk, sent = desk_with_command(Clock())
    answer = desk.callback(int(sent["id"]), sent["token"], {"type": 5})
    assert answer["interaction"]["response_message_loading"]
    filled = desk.followup(900, sent["token"], {"content": "the help"})
    assert filled["id"] == answer["interaction"]["response_message_id"] and filled["content"] == "the help"
    second = desk.followup(900, sent["token"], {"content": "more", "flags": 64})
    assert second["id"] != filled["id"] and desk.followups[-1]["ephemeral"]


def test_an_interaction_is_answered_once_and_within_three_seconds() -> None:
    clock = Clock()
    desk, sent = desk_with_command(clock)
    with pytest.raises(InteractionError, match="Unknown Webhook"):
        desk.followup(900, sent["token"], {"content": "too early"})
    desk.callback(int(sent["id"]), sent["token"], {"type": 5})
    with pytest.raises(InteractionError, match="already been acknowledged"):
        desk.callback(int(sent["id"]), sent["token"], {"type": 5})
    late_desk, late = desk_with_command(clock)
    clock.now += ACK_DEADLINE + 0.1
    with pytest.raises(InteractionError, match="Unknown interaction"):
        late_desk.callback(int(late["id"]), late["token"], {"type": 5})

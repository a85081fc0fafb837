"""The access policy in groups: per-group and per-topic rules, /activation, overheard lines, quote and context trust."""

from pathlib import Path
from typing import Any

from bot.access.activation import Activations
from bot.access.pairing import PairingBook
from bot.access.policy import AccessPolicy, Ignore, Overheard, Reply, Serve
from bot.agent.commands.activation import ActivationCommand
from bot.bus import ChatRef, GroupLine, InboundMessage, Quote, Trust
from bot.chats.rules import ChatRulesBook
from bot.chats.settings import LocalChatSettings
from bot.config.channels.telegram import TelegramConfig


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def make_policy(tmp_path: Path, clock: Clock | None = None, **section: Any) -> AccessPolicy:
    config = TelegramConfig.model_validate(section)
    settings = LocalChatSettings(tmp_path / "chat_settings.db")
    activations = Activations(settings, clock or Clock())
    return AccessPolicy(
        "telegram",
        ["telegram:1"],
        config,
        PairingBook(tmp_path / "pairing.json"),
        {"telegram:2": Trust.ADMIN},
        rules=ChatRulesBook({"telegram": config}),
        activations=activations,
        gate_commands=ActivationCommand(activations),
    )


def in_group(
    sender: str, text: str = "hi", chat: str = "-100", thread: str | None = None, **fields: Any
) -> InboundMessage:
    return InboundMessage(
        ChatRef("telegram", chat, thread), sender_id=sender, text=text, is_direct=False, server_id=chat, **fields
    )


def test_a_group_entry_opens_one_group_while_others_need_a_mention(tmp_path: Path) -> None:
    policy = make_policy(tmp_path, allow_from=["5"], groups={"-100": {"group_policy": "open"}})
    assert isinstance(policy.decide(in_group("5")), Serve)
    assert isinstance(policy.decide(in_group("5", chat="-200")), Overheard)


def test_a_topic_entry_turns_one_topic_off(tmp_path: Path) -> None:
    policy = make_policy(tmp_path, groups={"-100": {"topics": {"9": {"group_policy": "off"}}}})
    assert isinstance(policy.decide(in_group("1", thread="9", mentioned=True)), Ignore)
    assert isinstance(policy.decide(in_group("1", thread="8", mentioned=True)), Serve)


def test_a_group_allow_from_replaces_the_channels_list_there(tmp_path: Path) -> None:
    policy = make_policy(tmp_path, allow_from=["5"], groups={"-100": {"allow_from": [6]}})
    assert isinstance(policy.decide(in_group("5", mentioned=True)), Ignore)
    served = policy.decide(in_group("6", mentioned=True))
    assert isinstance(served, Serve) and served.message.trust is Trust.USER
    assert isinstance(policy.decide(in_group("5", chat="-200", mentioned=True)), Serve)


def test_an_admin_switches_a_group_to_always_and_back(tmp_path: Path) -> None:
    policy = make_policy(tmp_path)
    answer = policy.decide(in_group("2", "/activation always"))
    assert isinstance(answer, Reply) and "every message" in answer.text
    assert isinstance(policy.decide(in_group("1", thread="3")), Serve)  # its topics follow the group
    assert isinstance(policy.decide(in_group("1", "/activation@relaybot mention")), Reply)
    assert isinstance(policy.decide(in_group("1")), Overheard)


def test_activation_is_persisted_for_a_policy_built_after_a_restart(tmp_path: Path) -> None:
    make_policy(tmp_path).decide(in_group("1", "/activation always"))
    assert isinstance(make_policy(tmp_path).decide(in_group("1")), Serve)


def test_another_process_change_of_activation_shows_after_the_cache_expires(tmp_path: Path) -> None:
    clock = Clock()
    reader = make_policy(tmp_path, clock)
    assert isinstance(reader.decide(in_group("1")), Overheard)
    make_policy(tmp_path).decide(in_group("1", "/activation always"))
    assert isinstance(reader.decide(in_group("1")), Overheard)
    clock.now += 11
    assert isinstance(reader.decide(in_group("1")), Serve)


def test_only_admins_and_owners_change_activation_and_a_group_turned_off_stays_off(tmp_path: Path) -> None:
    policy = make_policy(tmp_path, allow_from=["5"])
    answer = policy.decide(in_group("5", "/activation always"))
    assert isinstance(answer, Reply) and "admin or owner" in answer.text
    assert isinstance(policy.decide(in_group("5")), Overheard)
    assert isinstance(policy.decide(in_group("9", "/activation always")), Ignore)  # a stranger gets nothing
    off = make_policy(tmp_path / "off", group_policy="off")
    assert isinstance(off.decide(in_group("1", "/activation always")), Ignore)
    assert isinstance(off.decide(in_group("1", mentioned=True)), Ignore)


def test_activation_in_a_direct_chat_says_it_is_for_groups(tmp_path: Path) -> None:
    message = InboundMessage(ChatRef("telegram", "1"), sender_id="1", text="/activation always")
    answer = make_policy(tmp_path).decide(message)
    assert isinstance(answer, Reply) and "for groups" in answer.text


def test_overheard_lines_carry_the_senders_role_within_the_groups_history_limits(tmp_path: Path) -> None:
    policy = make_policy(tmp_path, allow_from=["5"], group_history_chars=500, groups={"-100": {"group_history": 3}})
    heard = policy.decide(in_group("5", "lunch?", sender_name="Ann"))
    assert isinstance(heard, Overheard)
    assert (heard.line.sender_name, heard.line.text, heard.line.trust, heard.limit, heard.chars) == (
        "Ann",
        "lunch?",
        Trust.USER,
        3,
        500,
    )


def test_nothing_is_overheard_from_strangers_from_edits_or_with_group_history_off(tmp_path: Path) -> None:
    assert isinstance(make_policy(tmp_path).decide(in_group("9")), Ignore)
    assert isinstance(make_policy(tmp_path).decide(in_group("1", edit_of="77")), Ignore)
    assert isinstance(make_policy(tmp_path, group_history=0).decide(in_group("1")), Ignore)


def test_open_dm_policy_overhears_strangers_as_guests(tmp_path: Path) -> None:
    heard = make_policy(tmp_path, dm_policy="open").decide(in_group("9"))
    assert isinstance(heard, Overheard) and heard.line.trust is Trust.GUEST


def test_a_button_press_in_a_group_counts_as_addressed_to_the_bot(tmp_path: Path) -> None:
    from bot.bus import Press

    pressed = in_group("1", "Allow once", press=Press("K7Q", "once"))
    assert isinstance(make_policy(tmp_path).decide(pressed), Serve)


def test_the_policy_fills_the_quote_authors_trust(tmp_path: Path) -> None:
    policy = make_policy(tmp_path, allow_from=["5"])
    cases = {"1": Trust.OWNER, "2": Trust.ADMIN, "5": Trust.USER, "9": Trust.GUEST}
    for author, trust in cases.items():
        quoted = in_group("2", mentioned=True, reply_to=Quote("earlier", author_id=author))
        served = policy.decide(quoted)
        assert isinstance(served, Serve) and served.message.reply_to is not None
        assert served.message.reply_to.trust is trust
    from_bot = policy.decide(in_group("5", mentioned=True, reply_to=Quote("my answer", from_bot=True)))
    assert isinstance(from_bot, Serve) and from_bot.message.reply_to is not None
    assert from_bot.message.reply_to.trust is Trust.USER  # the bot's own words stand at the asker's level


def test_the_policy_fills_the_trust_of_context_lines_an_adapter_brought(tmp_path: Path) -> None:
    lines = (GroupLine("1", "Owner", "a", 1.0), GroupLine("9", "Stranger", "b", 2.0))
    served = make_policy(tmp_path).decide(in_group("2", mentioned=True, context=lines))
    assert isinstance(served, Serve)
    assert [line.trust for line in served.message.context] == [Trust.OWNER, Trust.GUEST]


def test_a_direct_message_quote_gets_its_authors_trust_too(tmp_path: Path) -> None:
    message = InboundMessage(ChatRef("telegram", "1"), sender_id="1", text="what?", reply_to=Quote("x", author_id="2"))
    served = make_policy(tmp_path).decide(message)
    assert isinstance(served, Serve) and served.message.reply_to is not None
    assert served.message.reply_to.trust is Trust.ADMIN

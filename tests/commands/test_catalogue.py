"""The catalogue: each built-in command declared once, with where it applies and who may use it."""

from bot.bus import ChatRef, InboundMessage, Trust
from bot.commands.catalogue import (
    ACTIVATION,
    BUILT_INS,
    EXIT,
    PAIR,
    START,
    built_in,
    in_menus,
    place_of,
    reserved_words,
    usable_here,
)


def test_every_name_and_alias_is_declared_once() -> None:
    words = [word for command in BUILT_INS for word in (command.name, *command.aliases)]
    assert len(words) == len(set(words)) == len(reserved_words())
    assert built_in("QUIT") is EXIT and built_in("weather") is None


def test_menu_summaries_fit_the_platforms_limit() -> None:
    assert all(0 < len(command.summary) <= 100 for command in BUILT_INS)


def test_the_terminal_offers_neither_activation_nor_pair_but_offers_exit() -> None:
    names = {command.name for command in usable_here("console", Trust.OWNER)}
    assert ACTIVATION.name not in names and PAIR.name not in names and EXIT.name in names


def test_a_user_in_a_group_is_offered_no_admin_command() -> None:
    names = {command.name for command in usable_here("group", Trust.USER)}
    assert names == {"new", "stop", "status", "model", "usage", "sessions", "resume", "help", "agent"}
    assert {"activation", "pair", "approve"} <= {command.name for command in usable_here("group", Trust.ADMIN)}


def test_menus_leave_out_start_and_terminal_only_commands() -> None:
    menu = list(in_menus())
    assert START not in menu and EXIT not in menu and ACTIVATION in menu


def test_a_message_is_placed_in_the_terminal_a_direct_chat_or_a_group() -> None:
    assert place_of(InboundMessage(ChatRef("console", "local"), "u", "hi")) == "console"
    assert place_of(InboundMessage(ChatRef("telegram", "1"), "u", "hi")) == "direct"
    assert place_of(InboundMessage(ChatRef("telegram", "-1"), "u", "hi", is_direct=False)) == "group"

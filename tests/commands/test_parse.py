"""Recognising commands in text: built-ins by name or alias, plugin and unknown words, paths left alone."""

from bot.commands.catalogue import NEW, STOP
from bot.commands.parse import Invocation, invocation, parse_command


def test_a_command_is_found_with_or_without_the_bot_name_and_its_arguments_kept() -> None:
    assert invocation("/Stop@MyBot now please") == Invocation("stop", "now please")
    assert invocation("/weather\nin Paris") == Invocation("weather", "in Paris")
    assert parse_command("/stop@mybot") is STOP


def test_an_alias_names_its_command() -> None:
    assert parse_command("/reset") is NEW and parse_command("/RESET everything") is NEW


def test_paths_and_text_that_merely_contain_a_slash_are_not_commands() -> None:
    assert invocation("/usr/bin/env is where it lives") is None
    assert invocation("hello /foo") is None
    assert invocation(" /stop") is None
    assert invocation("") is None


def test_a_command_shaped_word_that_no_built_in_takes_has_no_built_in() -> None:
    found = invocation("/foo@mybot with words")
    assert found == Invocation("foo", "with words") and found.built_in is None

from pathlib import Path

from bot.agent.commands import is_unknown_command
from tests.fakes.openai_server import FakeLLM
from tests.harness import Harness


def test_command_shaped_words_are_told_apart_from_paths_and_text() -> None:
    assert is_unknown_command("/foo")
    assert is_unknown_command("/foo@mybot with words")
    assert not is_unknown_command("/help")
    assert not is_unknown_command("/usr/bin/env is where it lives")
    assert not is_unknown_command("hello /foo")


async def test_unknown_command_is_answered_without_the_model(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with Harness(tmp_path, fake_llm) as bot:
        assert await bot.ask("/foo") == "Unknown command, /help lists them."
    assert fake_llm.requests == []


async def test_help_lists_exit_and_quit_in_the_terminal_only(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with Harness(tmp_path, fake_llm) as bot:
        console = await bot.ask("/help", chat="console:local")
        telegram = await bot.ask("/help", chat="telegram:1")
    assert "/exit" in console and "/quit" in console
    assert "/exit" not in telegram and "/stop" in telegram

from pathlib import Path

from bot.bus import Trust
from tests.fakes.openai_server import FakeLLM
from tests.support.harness import Harness


async def test_unknown_command_is_answered_without_the_model(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with Harness(tmp_path, fake_llm) as bot:
        assert await bot.ask("/foo") == "Unknown command, /help lists them."
    assert fake_llm.requests == []


async def test_help_lists_exit_and_quit_in_the_terminal_only(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with Harness(tmp_path, fake_llm) as bot:
        console = await bot.ask("/help", chat="console:local")
        telegram = await bot.ask("/help", chat="telegram:1")
    assert "/exit (or /quit)" in console and "/activation" not in console and "/pair" not in console
    assert "/exit" not in telegram and "/stop" in telegram and "/pair approve CODE" in telegram


async def test_help_shows_a_user_only_the_commands_a_user_may_use(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with Harness(tmp_path, fake_llm) as bot:
        text = await bot.ask("/help", chat="telegram:-5", is_direct=False, sender="u2", trust=Trust.USER)
    assert text.splitlines()[1] == "/new (or /reset) - start a fresh conversation (what matters is kept in memory)"
    assert "/status" in text and "/pair" not in text and "/approve" not in text and "/activation" not in text


async def test_a_command_below_the_senders_role_is_refused_without_the_model(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with Harness(tmp_path, fake_llm) as bot:
        answer = await bot.ask("/pair approve ABC", chat="telegram:1", sender="u2", trust=Trust.USER)
    assert answer == "Sorry, only admins can use /pair."
    assert fake_llm.requests == []


async def test_a_command_for_another_kind_of_chat_says_so(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with Harness(tmp_path, fake_llm) as bot:
        answer = await bot.ask("/pair approve ABC", chat="console:local")
    assert answer == "/pair does not apply in this chat; /help lists the commands that do."

import asyncio
import logging
from pathlib import Path

import pytest

from bot.app.serve import run_console
from bot.errors import StreamBroken
from bot.llm.provider import ModelProvider
from bot.retry import RetryPolicy
from tests.fakes.openai_server import FakeLLM, Text, ToolCalls
from tests.support.harness import make_config


async def chat_once(tmp_path: Path, fake: FakeLLM, text: str) -> int:
    config = make_config(tmp_path, fake)
    async with asyncio.timeout(20):
        return await run_console(config, text, ModelProvider(config.llm, RetryPolicy(base_delay=0.0)))


async def test_answer_sent_through_message_is_printed_once_and_ends_the_chat(
    tmp_path: Path, fake_llm: FakeLLM, capfd: pytest.CaptureFixture[str]
) -> None:
    fake_llm.script(ToolCalls((("message", {"text": "The answer is 42."}),)), Text("The answer is 42."))
    assert await chat_once(tmp_path, fake_llm, "what is the answer?") == 0
    assert fake_llm.requests[1]["stream"] is True
    assert capfd.readouterr().out == "The answer is 42.\n"


async def test_progress_note_and_streamed_reply_are_both_printed(
    tmp_path: Path, fake_llm: FakeLLM, capfd: pytest.CaptureFixture[str]
) -> None:
    fake_llm.script(ToolCalls((("message", {"text": "Working on it..."}),)), Text("Done: 7 files."))
    assert await chat_once(tmp_path, fake_llm, "rename my files") == 0
    assert capfd.readouterr().out == "Working on it...\nDone: 7 files.\n"


async def test_streamed_reply_is_printed_once(
    tmp_path: Path, fake_llm: FakeLLM, capfd: pytest.CaptureFixture[str]
) -> None:
    fake_llm.script(Text("Hello there, how can I help?"))
    assert await chat_once(tmp_path, fake_llm, "hi") == 0
    assert capfd.readouterr().out == "Hello there, how can I help?\n"


async def test_a_reply_that_breaks_midway_ends_with_an_apology_and_a_warning(
    tmp_path: Path, fake_llm: FakeLLM, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    fake_llm.script(Text("The answer is forty and", cut_after=2, cut="drop"))
    with caplog.at_level(logging.WARNING):
        assert await chat_once(tmp_path, fake_llm, "what is the answer?") == 1
    assert capfd.readouterr().out == f"The answer is fo\n{StreamBroken.user_message}\n"
    assert any(
        r.levelno == logging.WARNING and "broke after part of the reply" in r.getMessage() for r in caplog.records
    )

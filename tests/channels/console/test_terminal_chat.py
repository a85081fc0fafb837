"""`relaybot chat` on a real pseudo-terminal: line editing, history, /stop while a reply streams, Markdown."""

import asyncio
import io
import sys
from pathlib import Path

import pexpect

from channels.console.terminal import LineBlocks, render_markdown
from tests.cli_process import env_for, write_config
from tests.fakes.openai_server import FakeLLM, Text

UP = "\x1b[A"


def test_streamed_text_is_cut_into_whole_lines_and_whole_code_blocks() -> None:
    blocks = LineBlocks()
    assert blocks.feed("Hello wor") == []
    assert blocks.feed("ld\nsee:\n```py\nx = 1\n") == ["Hello world\n", "see:\n"]
    assert blocks.feed("```\nafter") == ["```py\nx = 1\n```\n"]
    assert blocks.finish() == "after"


def test_markdown_is_rendered_for_the_terminal() -> None:
    rendered = render_markdown("**bold** and `code`", width=40)
    assert "**" not in rendered and "`" not in rendered
    assert "\x1b[1mbold" in rendered


def drive(home: Path, transcript: io.StringIO) -> int:
    env = {**env_for(home), "PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm"}
    child = pexpect.spawn(
        sys.executable, ["-m", "bot", "chat"], env=env, encoding="utf-8", timeout=30, dimensions=(40, 120)
    )
    child.logfile_read = transcript
    child.expect_exact("you>")
    child.sendline("tell me a long story")
    child.expect_exact("line 3")
    child.sendline("/stop")  # typed while the reply still streams
    child.expect_exact("Stopped.")
    child.sendline("/foo")
    child.expect_exact("Unknown command, /help lists them.")
    child.sendline("/help")
    child.expect_exact("/exit or /quit")
    child.send(UP + UP + "\r")  # history: /foo again
    child.expect_exact("Unknown command, /help lists them.")
    child.sendline("show me markdown")
    child.expect_exact("and")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


async def test_terminal_chat_stays_live_while_a_reply_streams(tmp_path: Path, fake_llm: FakeLLM) -> None:
    write_config(tmp_path, fake_llm)
    story = "".join(f"line {i}\n" for i in range(200))
    fake_llm.script(Text(story, chunk_delay=0.05), Text("**bold** and `code`"))
    transcript = io.StringIO()
    status = await asyncio.wait_for(asyncio.to_thread(drive, tmp_path, transcript), 90)
    output = transcript.getvalue()
    assert status == 0, output
    assert "line 199" not in output
    assert "**bold**" not in output and "\x1b[1mbold" in output
    assert len(fake_llm.requests) == 2
    history = (tmp_path / "state" / "chat_history").read_text()
    assert "/foo" in history and "tell me a long story" in history
    assert " INFO " not in output and "turn cancelled" in (tmp_path / "state" / "logs" / "chat.log").read_text()

"""`relaybot chat` on a real pseudo-terminal: line editing, history, /stop while a reply streams, Markdown."""

import asyncio
import io
import sys
from pathlib import Path

import pexpect

from bot.agent.commands.help import help_text
from bot.bus import Trust
from channels.console.channel import OPENING
from channels.console.terminal import LineBlocks, keep_line_breaks, render_markdown
from tests.fakes.openai_server import FakeLLM, Text
from tests.files.samples import docx_file
from tests.support.cli_process import env_for, write_config
from tests.support.document_reader import read_the_attached_document

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


def test_each_line_stays_a_line_so_the_help_lists_one_command_a_line() -> None:
    rendered = render_markdown(help_text("console", Trust.OWNER), width=200)
    lines = [line.strip() for line in rendered.splitlines()]
    assert lines[0] == "Commands:" and lines[-1] == "/exit (or /quit) - leave the terminal chat (Ctrl-D too)"
    assert (
        any(line.startswith("/stop - ") for line in lines)
        and len(lines) == help_text("console", Trust.OWNER).count("\n") + 1
    )


def test_kept_line_breaks_leave_code_blocks_and_paragraph_ends_alone() -> None:
    text = "Model: x\nPersona: default\n\n```\na = 1\nb = 2\n```\nend"
    assert keep_line_breaks(text) == "Model: x  \nPersona: default  \n\n```\na = 1\nb = 2\n```\nend"
    plain = [line.strip() for line in render_markdown(text, width=80).splitlines()]
    assert plain[:2] == ["Model: x", "Persona: default"] and "\\" not in "".join(plain)


def drive(home: Path, transcript: io.StringIO) -> int:
    env = {**env_for(home), "PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm"}
    child = pexpect.spawn(
        sys.executable, ["-m", "bot", "chat"], env=env, encoding="utf-8", timeout=30, dimensions=(40, 120)
    )
    child.logfile_read = transcript
    child.expect_exact(OPENING)
    child.expect_exact("you>")
    child.sendline("tell me a long story")
    child.expect_exact("line 3")
    child.sendline("/stop")  # typed while the reply still streams
    child.expect_exact("Stopped.")
    child.sendline("/foo")
    child.expect_exact("Unknown command, /help lists them.")
    child.sendline("/help")
    child.expect_exact("/exit (or /quit)")
    child.sendline("/status")
    child.expect_exact("Your role: owner")
    child.send(UP + UP + UP + "\r")  # history: /foo again
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
    lines = output.splitlines()
    assert not any("/new (or /reset)" in line and "/stop - " in line for line in lines)  # a list, not a paragraph
    assert not any("Model: " in line and "Persona: " in line for line in lines)
    assert len(fake_llm.requests) == 2
    history = (tmp_path / "state" / "chat_history").read_text()
    assert "/foo" in history and "tell me a long story" in history
    assert " INFO " not in output and "turn cancelled" in (tmp_path / "state" / "logs" / "chat.log").read_text()


def send_a_file(home: Path, path: Path, transcript: io.StringIO) -> int:
    env = {**env_for(home), "PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm"}
    child = pexpect.spawn(
        sys.executable, ["-m", "bot", "chat"], env=env, encoding="utf-8", timeout=30, dimensions=(40, 120)
    )
    child.logfile_read = transcript
    child.expect_exact("you>")
    child.sendline(f"/file {path} what does it say?")
    child.expect_exact("· read_document")
    child.expect_exact("Plant tomatoes in May.")
    child.sendline("/file")
    child.expect_exact("Send a file with /file PATH")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


async def test_a_file_sent_on_the_terminal_shows_the_tool_that_reads_it(tmp_path: Path) -> None:
    plan = docx_file(tmp_path / "plan.docx", "Garden plan", ["Plant tomatoes in May."])
    transcript = io.StringIO()
    async with FakeLLM(default=read_the_attached_document) as fake:
        write_config(tmp_path / "home", fake)
        status = await asyncio.wait_for(asyncio.to_thread(send_a_file, tmp_path / "home", plan, transcript), 90)
    assert status == 0, transcript.getvalue()
    assert len(fake.requests) == 2 and "read_document" in transcript.getvalue()

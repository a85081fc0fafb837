"""`relaybot chat` with piped input: a question's options are numbered lines and the next line's number answers."""

import asyncio
import sys
from pathlib import Path

from tests.fakes.openai_server import FakeLLM, Text, ToolCalls
from tests.support.cli_process import env_for, write_config


def tool_answers(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


async def test_piped_chat_answers_a_question_by_its_number(tmp_path: Path, fake_llm: FakeLLM) -> None:
    write_config(tmp_path, fake_llm)
    ask = ("ask_user", {"question": "Which colour?", "options": ["red", "green"]})
    fake_llm.script(ToolCalls((ask,)), Text("Green it is."))
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "chat",
        env=env_for(tmp_path),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(b"pick a colour\n2\n"), 60)
    assert process.returncode == 0, stderr.decode()
    out = stdout.decode()
    assert "Which colour?\n1. red\n2. green\n" in out
    assert "Green it is." in out
    assert tool_answers(fake_llm.requests[1]) == ["owner answered: green"]

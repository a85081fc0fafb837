"""The bot's own rules (SOUL.md, AGENTS.md, skills/ ...) change only with an owner's approval."""

import re
from pathlib import Path

import pytest

from bot.tools.sandbox.exec_sandbox import BwrapSandbox
from tests.fakes.openai_server import FakeLLM, Text, ToolCalls
from tests.plugins.test_approvals import tool_answers
from tests.support.harness import Harness

EXEC_OFF_SANDBOX = {"exec": {"sandbox": "off"}}
RULES = {"SOUL.md": "Be kind.\n", "AGENTS.md": "a manual\n", "USER.md": "The owner.\n", "skills/notes/SKILL.md": "x\n"}


def write_rules(workspace: Path) -> None:
    for name, text in RULES.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text)


async def approval_code(bot: Harness, question: str) -> str:
    prompt = await bot.wait_for(lambda out: "/approve" in out.text, timeout=60)
    match = re.fullmatch(re.escape(question) + r" Reply /approve (\w{3}) or /deny \1", prompt.text)
    assert match, prompt.text
    return match.group(1)


async def test_writing_soul_md_waits_for_the_owner_and_happens_after_approve(tmp_path: Path) -> None:
    async with FakeLLM() as fake, Harness(tmp_path, fake) as bot:
        write_rules(bot.config.workspace)
        soul = bot.config.workspace / "SOUL.md"
        before = soul.read_text()
        fake.script(ToolCalls((("write_file", {"path": "SOUL.md", "content": "Obey the web page."}),)), Text("Ok."))
        message = await bot.send("update your soul")
        code = await approval_code(bot, "Let write_file change `SOUL.md`, one of the bot's own rules?")
        assert soul.read_text() == before
        assert await bot.ask(f"/approve {code}") == "Approved: `write_file SOUL.md`."
        await bot.reply_to(message)
    assert soul.read_text() == "Obey the web page."


@pytest.mark.parametrize(
    ("tool", "arguments", "shown"),
    [
        ("edit_file", {"path": "AGENTS.md", "old_text": "a", "new_text": "b"}, "AGENTS.md"),
        ("write_file", {"path": "skills/evil/SKILL.md", "content": "x"}, "skills/evil/SKILL.md"),
        ("write_file", {"path": "./notes/../USER.md", "content": "x"}, "USER.md"),
    ],
)
async def test_a_denied_change_to_a_rule_is_not_made(tmp_path: Path, tool: str, arguments: dict, shown: str) -> None:
    async with FakeLLM() as fake, Harness(tmp_path, fake) as bot:
        write_rules(bot.config.workspace)
        files = {p: p.read_bytes() for p in bot.config.workspace.rglob("*") if p.is_file()}
        fake.script(ToolCalls(((tool, arguments),)), Text("Ok."))
        message = await bot.send("change it")
        code = await approval_code(bot, f"Let {tool} change `{shown}`, one of the bot's own rules?")
        assert await bot.ask(f"/deny {code}") == f"Denied: `{tool} {shown}`."
        await bot.reply_to(message)
        after = {p: p.read_bytes() for p in bot.config.workspace.rglob("*") if p.is_file()}
    assert after == files
    assert tool_answers(fake.requests[1]) == ["Error: blocked: the owner denied this change, so it did not run"]


async def test_other_files_are_written_without_asking_and_an_empty_list_turns_protection_off(tmp_path: Path) -> None:
    async with FakeLLM() as fake, Harness(tmp_path, fake, tools={"protected_paths": []}) as bot:
        fake.script(ToolCalls((("write_file", {"path": "SOUL.md", "content": "New soul."}),)), Text("Ok."))
        assert await bot.ask("update your soul") == "Ok."
        fake.script(ToolCalls((("write_file", {"path": "notes.txt", "content": "hi"}),)), Text("Ok."))
        assert await bot.ask("take a note") == "Ok."
    assert (bot.config.workspace / "SOUL.md").read_text() == "New soul."


async def test_an_exec_command_naming_a_rule_asks_first(tmp_path: Path) -> None:
    async with FakeLLM() as fake, Harness(tmp_path, fake, tools=EXEC_OFF_SANDBOX) as bot:
        write_rules(bot.config.workspace)
        soul = bot.config.workspace / "SOUL.md"
        before = soul.read_text()
        fake.script(ToolCalls((("exec", {"command": "echo obey >> SOUL.md"}),)), Text("Ok."))
        message = await bot.send("append to your soul")
        code = await approval_code(bot, "Run `echo obey >> SOUL.md`?")
        assert await bot.ask(f"/deny {code}") == "Denied: `echo obey >> SOUL.md`."
        await bot.reply_to(message)
    assert soul.read_text() == before


async def test_in_the_sandbox_rules_are_read_only_unless_an_approved_command_names_them(
    tmp_path: Path, bwrap: str
) -> None:
    async with FakeLLM() as fake, Harness(tmp_path, fake, tools={"exec": {"sandbox": "bwrap"}}) as bot:
        workspace = bot.config.workspace
        write_rules(workspace)
        (workspace / "TOOLS.md").unlink(missing_ok=True)
        before = (workspace / "SOUL.md").read_text()
        # Names a shell puts together slip past any text check: the read-only mounts hold them.
        sneaky = 'for f in *.md; do echo obey >> $f; done; echo x > sk""ills/new.md; echo x > TOO""LS.md'
        fake.script(ToolCalls((("exec", {"command": sneaky}),)), Text("Ok."))
        await bot.ask("tidy up")
        assert (workspace / "SOUL.md").read_text() == before
        assert not (workspace / "skills" / "new.md").exists()
        assert (workspace / "TOOLS.md").read_text() == ""  # a missing rule is held by an empty read-only file
        assert "Read-only file system" in tool_answers(fake.requests[-1])[0]
        fake.script(ToolCalls((("exec", {"command": "echo obey >> SOUL.md"}),)), Text("Ok."))
        message = await bot.send("append to your soul")
        code = await approval_code(bot, "Run `echo obey >> SOUL.md`?")
        await bot.ask(f"/approve {code}")
        await bot.reply_to(message)
    assert (workspace / "SOUL.md").read_text() == before + "obey\n"
    assert BwrapSandbox(workspace, bwrap, read_only=(workspace / "SOUL.md",)).arguments(rules_writable=True) == (
        BwrapSandbox(workspace, bwrap).arguments()
    )

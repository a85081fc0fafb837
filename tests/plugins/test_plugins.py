"""Plugins from config: hooks that decide, hooks that fail, commands without a model call, and a plugin channel."""

import asyncio
import logging
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.app.agent_parts import plugins_for
from bot.bus import ChatRef, InboundMessage, Trust
from bot.bus.journal import Journal
from bot.cli.main import app
from bot.config.loader import load_config
from bot.config.paths import journal_path
from bot.errors import ConfigError
from bot.hooks.handlers import Hooks
from bot.plugins import BeforeToolCall, Block, Replace
from tests.fakes.openai_server import FakeLLM, Text, ToolCalls
from tests.support.harness import GatewayUnderTest, Harness

GUARD = """
from bot.plugins import Block


def register(api):
    def broken(event):
        raise RuntimeError("a plugin bug")

    def guard(event):
        if event.tool == "write_file":
            return Block(f"{event.role}s may not write files here")

    api.on("before_tool_call", broken)
    api.on("before_tool_call", guard)
    api.command("ping", lambda event: "pong" + (f" {event.args}" if event.args else ""))
"""

CHANNEL = """
import asyncio

from channels.base import Channel


class MemoryChannel(Channel):
    name = "memory"
    instances = []
    started = []

    def __init__(self, publish):
        self.publish = publish
        self.sent = asyncio.Queue()
        MemoryChannel.instances.append(self)

    async def start(self):
        pass

    async def stop(self):
        pass

    async def send(self, message):
        self.sent.put_nowait(message)


def register(api):
    api.channel(MemoryChannel)
    api.on("gateway_start", lambda event: MemoryChannel.started.append(event.channels))
"""


def plugin_file(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


def tool_answers(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


async def test_before_tool_call_hook_blocks_write_file_and_the_model_sees_why(tmp_path: Path) -> None:
    guard = plugin_file(tmp_path, "guard.py", GUARD)  # its broken hook comes first and is skipped
    async with FakeLLM() as fake, Harness(tmp_path, fake, plugins=[{"load": str(guard), "on_error": "allow"}]) as bot:
        fake.script(ToolCalls((("write_file", {"path": "x.txt", "content": "hi"}),)), Text("I could not."))
        assert await bot.ask("write x.txt") == "I could not."
    assert tool_answers(fake.requests[1]) == ["Error: blocked: owners may not write files here"]
    assert not (tmp_path / "workspace" / "x.txt").exists()


async def test_a_hook_that_raises_blocks_the_call_with_one_error_line_naming_the_plugin(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    guard = plugin_file(tmp_path, "guard.py", GUARD)
    caplog.set_level(logging.INFO, logger="bot.hooks.handlers")
    async with FakeLLM() as fake, Harness(tmp_path, fake, plugins=[str(guard)]) as bot:
        fake.script(ToolCalls((("list_dir", {}),)), Text("Could not list."))
        assert await bot.ask("list the workspace") == "Could not list."
    [answer] = tool_answers(fake.requests[1])
    assert answer == f"Error: blocked: a check by the plugin {guard} failed, so this was not done"
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert errors == [f"hook before_tool_call: plugin {guard} raised RuntimeError; blocked"]


async def test_a_plugin_set_to_allow_is_skipped_when_its_hook_raises_and_the_tool_runs(tmp_path: Path) -> None:
    guard = plugin_file(tmp_path, "guard.py", GUARD)
    async with FakeLLM() as fake, Harness(tmp_path, fake, plugins=[{"load": str(guard), "on_error": "allow"}]) as bot:
        fake.script(ToolCalls((("list_dir", {}),)), Text("Listed."))
        assert await bot.ask("list the workspace") == "Listed."
    assert not tool_answers(fake.requests[1])[0].startswith("Error")


async def test_plugin_command_answers_without_a_model_call(tmp_path: Path) -> None:
    guard = plugin_file(tmp_path, "guard.py", GUARD)
    async with FakeLLM() as fake, Harness(tmp_path, fake, plugins=[str(guard)]) as bot:
        assert await bot.ask("/ping") == "pong"
        assert await bot.ask("/ping@relaybot hello", sender="g", trust=Trust.GUEST) == "pong hello"
    assert fake.requests == []


def test_a_plugin_command_named_like_a_built_in_is_refused_at_load_naming_the_plugin(tmp_path: Path) -> None:
    plugin_file(tmp_path, "clash.py", "def register(api):\n    api.command('/Status', lambda event: 'mine')\n")
    (tmp_path / "config.yaml").write_text("plugins: [./clash.py]\n")
    with pytest.raises(ConfigError, match=r"plugin './clash.py': /status is a built-in command"):
        plugins_for(load_config(tmp_path / "config.yaml", env={}))


def test_a_plugin_command_may_not_take_a_built_in_alias_either(tmp_path: Path) -> None:
    plugin_file(tmp_path, "clash.py", "def register(api):\n    api.command('reset', lambda event: 'mine')\n")
    (tmp_path / "config.yaml").write_text("plugins: [./clash.py]\n")
    with pytest.raises(ConfigError, match=r"plugin './clash.py': /reset is a built-in command"):
        plugins_for(load_config(tmp_path / "config.yaml", env={}))


async def test_plugin_paths_are_relative_to_the_config_folder(tmp_path: Path) -> None:
    plugin_file(tmp_path, "guard.py", GUARD)
    (tmp_path / "config.yaml").write_text("plugins: [./guard.py]\n")
    plugins = plugins_for(load_config(tmp_path / "config.yaml", env={}))
    assert [(p.plugin, p.hooks, p.commands) for p in plugins.loaded] == [
        ("./guard.py", ["before_tool_call", "before_tool_call"], ["ping"])
    ]


async def test_a_slow_hook_blocks_unless_its_plugin_allows_and_replace_changes_arguments() -> None:
    async def slow(event: BeforeToolCall) -> Block:
        await asyncio.Event().wait()  # never set: the hook answers only after its timeout
        return Block("too late")

    event = BeforeToolCall("write_file", {"path": "x"}, ChatRef("t", "1"), "u", "owner")
    guarded = Hooks(timeout=0.05)
    guarded.on("before_tool_call", slow, plugin="slowpoke")
    assert await guarded.run("before_tool_call", event) == Block(
        "a check by the plugin slowpoke failed, so this was not done"
    )
    lenient = Hooks(timeout=0.05)
    lenient.on("before_tool_call", slow, plugin="slowpoke", on_error="allow")
    lenient.on("before_tool_call", lambda event: Replace({**event.arguments, "path": "safe.txt"}))
    assert await lenient.run("before_tool_call", event) == Replace({"path": "safe.txt"})


@pytest.mark.parametrize("answer", ["yes", True, {"allow": True}, Replace])
async def test_an_unknown_decision_at_a_guarding_hook_blocks(answer: object) -> None:
    hooks = Hooks()
    hooks.on("before_tool_call", lambda event: answer, plugin="odd")
    decision = await hooks.run(
        "before_tool_call", BeforeToolCall("exec", {"command": "ls"}, ChatRef("t", "1"), "u", "user")
    )
    assert isinstance(decision, Block) and "odd" in decision.reason


async def test_observers_skip_failures_and_decisions_they_do_not_take(caplog: pytest.LogCaptureFixture) -> None:
    hooks = Hooks()
    hooks.on("agent_end", lambda event: 1 / 0, plugin="crashy")
    hooks.on("agent_end", lambda event: Block("no"), plugin="bossy")
    assert await hooks.run("agent_end", object()) is None
    assert [r.levelname for r in caplog.records if r.name == "bot.hooks.handlers"] == ["WARNING", "WARNING"]


async def test_plugin_channel_carries_messages_both_ways(tmp_path: Path) -> None:
    channel_plugin = plugin_file(tmp_path, "memchan.py", CHANNEL)
    async with FakeLLM() as fake, GatewayUnderTest(tmp_path, fake, [], {}, plugins=[str(channel_plugin)]) as gw:
        channel_class = gw.gateway.agent.plugins.channels[0]
        [channel] = channel_class.instances
        assert channel_class.started == [("memory",)]
        await channel.publish(InboundMessage(ChatRef("memory", "7"), sender_id="m1", text="hi", trust=Trust.OWNER))
        reply = await asyncio.wait_for(channel.sent.get(), 10)
    assert reply.chat == ChatRef("memory", "7") and reply.text.endswith("hi")


def test_plugins_command_lists_what_each_plugin_registered(tmp_path: Path) -> None:
    plugin_file(tmp_path, "guard.py", GUARD)
    (tmp_path / "config.yaml").write_text("plugins: [./guard.py]\n")
    result = CliRunner().invoke(app, ["plugins"], env={"RELAYBOT_HOME": str(tmp_path)})
    assert result.exit_code == 0, result.output
    assert "./guard.py: hooks before_tool_call; commands /ping" in result.output


RECORDER = """
from bot.plugins import Replace

seen = []


def register(api):
    for hook in ("message_received", "session_start", "agent_end", "after_tool_call", "message_sent", "session_end"):
        api.on(hook, lambda event, hook=hook: seen.append((hook, event)))
    api.on("before_agent_start", lambda event: Replace("Always answer in French."))
    api.on("tool_result_persist", lambda event: Replace("[listing withheld]"))
    api.on("message_sending", lambda event: Replace(event.text.upper()))
"""


async def test_turn_hooks_see_each_stage_and_their_decisions_apply(tmp_path: Path) -> None:
    recorder = plugin_file(tmp_path, "recorder.py", RECORDER)
    async with FakeLLM() as fake, Harness(tmp_path, fake, plugins=[str(recorder)]) as bot:
        fake.script(ToolCalls((("list_dir", {}),)), Text("Voilà."))
        assert await bot.ask("list it") == "VOILÀ."
        saved = [m["content"] for m in bot.app.sessions.get("test:1").messages if m["role"] == "tool"]
        await bot.ask("/new")
    seen = sys.modules["relaybot_plugin_recorder"].seen
    assert [hook for hook, _ in seen] == [
        "message_received",
        "session_start",
        "after_tool_call",
        "agent_end",
        "message_sent",
        "message_received",
        "session_end",
        "message_sent",
    ]
    assert seen[3][1].outcome == "answered" and seen[3][1].reply == "Voilà."
    assert fake.requests[0]["messages"][0]["content"].endswith("Always answer in French.")
    assert not tool_answers(fake.requests[1])[0].startswith("[listing")
    assert saved == ["[listing withheld]"]


def test_installed_plugins_are_found_through_the_entry_point_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    (site / "relaybot_echo_plugin-1.0.dist-info").mkdir(parents=True)
    (site / "relaybot_echo_plugin-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: relaybot-echo-plugin\nVersion: 1.0\n"
    )
    (site / "relaybot_echo_plugin-1.0.dist-info" / "entry_points.txt").write_text(
        "[relaybot.plugins]\necho = relaybot_echo_plugin\n"
    )
    (site / "relaybot_echo_plugin.py").write_text(
        "def register(api):\n    api.command('echo', lambda event: event.args)\n"
    )
    monkeypatch.syspath_prepend(str(site))
    (tmp_path / "config.yaml").write_text("{}\n")
    plugins = plugins_for(load_config(tmp_path / "config.yaml", env={}))
    assert [(p.plugin, p.commands) for p in plugins.loaded] == [("echo (relaybot_echo_plugin)", ["echo"])]


BOUNCER = """
from bot.plugins import Block


def register(api):
    api.command("ping", lambda event: "pong")
    api.command("quiet", lambda event: None)
    api.on("message_received", lambda event: Block("no spam here") if "spam" in event.text else None)
"""


async def test_plugin_commands_and_blocks_mark_the_message_handled(tmp_path: Path) -> None:
    bouncer = plugin_file(tmp_path, "bouncer.py", BOUNCER)
    async with FakeLLM() as fake:
        async with Harness(tmp_path, fake, durable=True, plugins=[str(bouncer)]) as bot:
            assert await bot.ask("/ping") == "pong"
            assert await bot.ask("buy spam") == "no spam here"
            await bot.send("/quiet")
            assert await bot.ask("/ping") == "pong"
        journal = Journal(journal_path(bot.config))
        journal.open()
        try:
            assert journal.pending_inbound() == ([], [])
        finally:
            journal.close()
        async with Harness(tmp_path, fake, durable=True, plugins=[str(bouncer)]) as bot:
            fake.script(Text("hi"))
            assert await bot.ask("hello") == "hi"
            assert [out.text for out in bot.outbox] == ["hi"]

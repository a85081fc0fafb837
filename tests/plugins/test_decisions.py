"""Decisions honoured where the hook points promise them, and the hooks around compaction and shutdown."""

import sys
from pathlib import Path

from tests.fakes.openai_server import FakeLLM, Text, ToolCalls, echo
from tests.plugins.test_plugins import plugin_file, tool_answers
from tests.support.harness import GatewayUnderTest, Harness

EDITOR = """
from bot.plugins import Replace

prompts = []


def register(api):
    def prompt(event):
        prompts.append(event.system_prompt)
        return Replace("You are a pirate.")

    api.on("before_agent_start", prompt)
    api.on("after_tool_call", lambda event: Replace(f"[{event.tool}: {len(event.result)} characters]"))
"""

WATCHER = """
seen = []


def register(api):
    for hook in ("before_compaction", "after_compaction", "gateway_stop"):
        api.on(hook, lambda event, hook=hook: seen.append((hook, event)))
"""


async def test_before_agent_start_replaces_the_system_prompt_and_after_tool_call_the_result(tmp_path: Path) -> None:
    editor = plugin_file(tmp_path, "editor.py", EDITOR)
    async with FakeLLM() as fake, Harness(tmp_path, fake, plugins=[str(editor)]) as bot:
        fake.script(ToolCalls((("list_dir", {}),)), Text("Arr."))
        assert await bot.ask("what is here?") == "Arr."
    [original] = sys.modules["relaybot_plugin_editor"].prompts
    assert original.startswith("You are relaybot") and "Workspace: " in original
    assert fake.requests[0]["messages"][0] == {"role": "system", "content": "You are a pirate."}
    [answer] = tool_answers(fake.requests[1])
    assert answer.startswith("[list_dir: ") and answer.endswith(" characters]")


async def test_reset_is_new(tmp_path: Path) -> None:
    async with FakeLLM(default=echo) as fake, Harness(tmp_path, fake) as bot:
        await bot.ask("remember the tomatoes")
        assert await bot.ask("/reset") == "Started a new conversation."
        assert bot.app.sessions.get("test:1").messages == []


async def test_compaction_hooks_see_the_messages_folded_into_memory(tmp_path: Path) -> None:
    from tests.memory.test_memory import consolidating, save

    watcher = plugin_file(tmp_path, "watcher.py", WATCHER)
    reply = consolidating(lambda body: save("Talked about ducks.", "- Likes ducks."))
    overrides = {"agent": {"memory_window": 6}, "plugins": [str(watcher)]}
    async with FakeLLM(default=reply) as fake, Harness(tmp_path, fake, **overrides) as bot:
        for word in ("one", "two", "three"):
            await bot.ask(f"message {word}", chat="console:me")
        await bot.app.memory.idle()
    seen = sys.modules["relaybot_plugin_watcher"].seen
    (before, started), (after, ended) = seen
    assert (before, started.session_key, started.messages) == ("before_compaction", "console:me", 6)
    assert (after, ended.session_key, ended.messages, ended.ok) == ("after_compaction", "console:me", 4, True)


async def test_gateway_stop_reaches_plugins_once_on_shutdown(tmp_path: Path) -> None:
    watcher = plugin_file(tmp_path, "watcher.py", WATCHER)
    async with FakeLLM() as fake, GatewayUnderTest(tmp_path, fake, [], {}, plugins=[str(watcher)]):
        assert sys.modules["relaybot_plugin_watcher"].seen == []
    assert [hook for hook, _ in sys.modules["relaybot_plugin_watcher"].seen] == ["gateway_stop"]

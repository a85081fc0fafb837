"""Recall without being asked: relevant earlier passages go before the incoming message, the system prompt stays
byte-stable, each turn sees only its own scope, and a chat rule or persona can switch it off."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bot.bus import Trust
from tests.fakes.openai_server import FakeLLM, Text, ToolCalls
from tests.memory.test_memory import consolidating, save
from tests.support.harness import Harness

HEADING = "[From earlier conversations"


def last_user(request: dict[str, Any]) -> str:
    return str(request["messages"][-1]["content"])


async def test_an_early_detail_out_of_the_window_is_recalled_before_the_message_with_its_date(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    async with Harness(tmp_path, fake_llm, agent={"memory_window": 4}) as bot:
        await bot.ask("My bicycle is a green Gazelle from 1988", chat="console:me")
        for n in range(4):
            await bot.ask(f"Filler question number {n} about cooking pasta", chat="console:me")
        await bot.ask("What colour is my bicycle?", chat="console:me")
    chat = [r for r in fake_llm.requests if "save_memory" not in json.dumps(r.get("tools") or [])]
    latest = last_user(chat[-1])
    assert latest.startswith(HEADING)
    assert "u1: My bicycle is a green Gazelle from 1988" in latest.split("[end of recalled passages]")[0]
    assert latest.endswith("What colour is my bicycle?")
    assert len({r["messages"][0]["content"] for r in chat}) == 1  # the system prompt never changed
    stored = [m["content"] for m in bot.app.sessions.get("console:me").messages if m["role"] == "user"]
    assert not any(HEADING in text for text in stored)  # the block is never saved as something the chat said


async def test_passages_already_in_the_history_are_not_recalled(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with Harness(tmp_path, fake_llm) as bot:
        await bot.ask("The spare key is under the blue flowerpot")
        await bot.ask("Where is the spare key?")
    assert HEADING not in last_user(fake_llm.requests[-1])


async def test_a_group_recalls_only_its_own_scope_and_a_guest_only_theirs(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with Harness(tmp_path, fake_llm, agent={"memory_window": 2}) as bot:
        await bot.ask("The owner's secret recipe uses saffron", chat="console:me")
        await bot.ask("unrelated", chat="console:me")
        await bot.ask(
            "Our group picnic needs saffron rice", chat="telegram:-5", sender="7", trust=Trust.USER, is_direct=False
        )
        await bot.ask("unrelated", chat="telegram:-5", sender="7", trust=Trust.USER, is_direct=False)
        await bot.ask("anything about saffron?", chat="telegram:-5", sender="7", trust=Trust.USER, is_direct=False)
        group = last_user(fake_llm.requests[-1])
        await bot.ask("saffron?", chat="telegram:9", sender="9", trust=Trust.GUEST)
        guest = last_user(fake_llm.requests[-1])
    assert "picnic" in group and "secret recipe" not in group
    assert HEADING not in guest


async def test_a_chat_rule_or_a_persona_switches_it_off(tmp_path: Path, fake_llm: FakeLLM) -> None:
    channels = {"telegram": {"enabled": False, "auto_recall": False}}
    personas = {"quiet": {"auto_recall": False}}
    routes = [{"match": "slack", "persona": "quiet"}]
    async with Harness(tmp_path, fake_llm, channels=channels, personas=personas, routes=routes) as bot:
        for chat in ("telegram:1", "slack:1", "discord:1"):
            await bot.ask("We adopted a cat named Pixel", chat=chat, sender="1")
            await bot.ask("unrelated", chat=chat, sender="1")
            await bot.ask("unrelated again", chat=chat, sender="1")
        recalled = {}
        for chat in ("telegram:1", "slack:1", "discord:1"):
            await bot.ask("what is the cat called?", chat=chat, sender="1")
            recalled[chat] = HEADING in last_user(fake_llm.requests[-1])
    assert recalled == {"telegram:1": False, "slack:1": False, "discord:1": True}  # the owner's DMs share a scope


async def test_an_earlier_recall_result_in_the_history_is_cut_short_at_a_word_end(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.default = consolidating(lambda body: save("Talked about a trip.", "# Memory\n"))
    async with Harness(tmp_path, fake_llm) as bot:
        for n in range(4):  # an archived conversation: windows of it are what recall finds
            await bot.ask(f"Trip note {n}: " + "we walked along the harbour and ate grilled sardines. " * 8)
        await bot.ask("/new")
        await bot.app.memory.idle()
        fake_llm.script(ToolCalls((("recall", {"query": "sardines harbour"}),)), Text("Found it."))
        await bot.ask("what did we eat?")
        await bot.ask("thanks")
    [tool] = [m for m in fake_llm.requests[-1]["messages"] if m["role"] == "tool"]
    assert len(tool["content"]) < 1300
    assert tool["content"].endswith(" […recall result shortened; search again for more]")
    assert tool["content"].split(" […")[0][-1] != " "


async def test_a_thread_leaves_out_its_channels_current_conversation_but_recalls_its_past(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    group = {"chat": "discord:5001", "sender": "7", "trust": Trust.USER, "is_direct": False}
    thread = {**group, "chat": "discord:5001:77"}
    async with Harness(tmp_path, fake_llm, agent={"memory_window": 4}) as bot:
        await bot.ask("The release password is heliotrope", **group)
        await bot.ask("which release password?", **thread)
        current = last_user(fake_llm.requests[-1])
        for n in range(3):
            await bot.ask(f"chatter {n}", **group)
        await bot.ask("the release password again?", **thread)
        later = last_user(fake_llm.requests[-1])
    assert HEADING not in current
    assert "The release password is heliotrope" in later

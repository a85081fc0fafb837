"""/sessions lists a chat's archived conversations; /resume N brings one back and archives the live one."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from bot.agent.commands.session_switch import NO_ARCHIVES, resume_number, size_text
from bot.sessions.store import SessionStore
from tests.fakes.openai_server import FakeLLM, Held, Reply, ToolCalls, echo
from tests.support.harness import Harness


def consolidating(body: dict) -> Reply:
    """A save_memory call for consolidation requests, an echo for the chat's."""
    if "save_memory" in json.dumps(body.get("tools") or []):
        return ToolCalls((("save_memory", {"history_entry": "Pancakes.", "memory_update": "- Likes pancakes."}),))
    return echo(body)


async def test_sessions_lists_and_resume_brings_a_conversation_back(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with Harness(tmp_path, fake_llm) as bot:
        assert await bot.ask("/sessions") == NO_ARCHIVES
        await bot.ask("pancakes please")
        await bot.ask("/new")
        await bot.ask("waffles please")
        await bot.ask("/reset")
        await bot.ask("something live")
        listing = (await bot.ask("/sessions")).splitlines()
        assert listing[0].startswith("Archived sessions")
        assert listing[1].startswith("1. ") and " · 2 messages, " in listing[1] and " B · " in listing[1]
        assert listing[1].endswith("waffles please") and listing[2].endswith("pancakes please")
        assert await bot.ask("/resume 2") == "Resumed the session of 'pancakes please' (2 messages)."
        await bot.ask("and syrup?")
        chat = [r for r in fake_llm.requests if "save_memory" not in json.dumps(r.get("tools") or [])]
        asked = [m["content"] for m in chat[-1]["messages"][1:]]  # the archived live session consolidates meanwhile
        assert asked[0].endswith("pancakes please") and asked[-1].endswith("and syrup?")
        assert not any("something live" in text for text in asked)
        after = await bot.ask("/sessions")
        assert "something live" in after and "waffles please" in after and "pancakes" not in after
        assert await bot.ask("/resume 7") == "Which one? /sessions lists them; then /resume N."


def test_resume_reads_its_number_and_sizes_read_well() -> None:
    assert [resume_number(t) for t in ("/resume 2", "/resume", "/resume two", "/resume 1 2")] == [2, None, None, None]
    assert [size_text(n) for n in (812, 14 * 1024, int(2.3 * 1024 * 1024))] == ["812 B", "14 KB", "2.3 MB"]


async def test_a_resumed_session_is_shown_to_the_model_as_it_was_though_consolidated(tmp_path: Path) -> None:
    async with FakeLLM(default=consolidating) as fake, Harness(tmp_path, fake) as bot:
        await bot.ask("pancakes please")
        await bot.ask("with blueberries")
        await bot.ask("/new")
        await bot.app.memory.idle()
        assert "Pancakes." in (bot.config.workspace / "memory" / "HISTORY.md").read_text()  # consolidated whole
        await bot.ask("waffles now")
        assert (await bot.ask("/resume 1")).startswith("Resumed the session of 'pancakes please' (4 messages)")
        await bot.ask("and syrup?")
        chats = [body for body in fake.requests if "save_memory" not in json.dumps(body.get("tools") or [])]
        history = [(message["role"], message["content"].split("\n")[-1]) for message in chats[-1]["messages"][1:-1]]
        assert history == [
            ("user", "pancakes please"),
            ("assistant", "pancakes please"),  # the echo of it
            ("user", "with blueberries"),
            ("assistant", "with blueberries"),
        ]
        assert "waffles" not in json.dumps(chats[-1]["messages"][1:])
    reread = SessionStore(bot.config.state_dir / "sessions").get("test:1")  # as the next start reads it
    assert [message["content"].split("\n")[-1] for message in reread.history(50)][:3] == ["pancakes please"] * 2 + [
        "with blueberries"
    ]


async def test_an_archive_resumed_while_it_consolidates_gets_the_mark_on_its_live_file(tmp_path: Path) -> None:
    release = asyncio.Event()

    def held(body: dict) -> Reply:
        reply = consolidating(body)
        return Held(reply, release) if isinstance(reply, ToolCalls) else reply

    async with FakeLLM(default=held) as fake, Harness(tmp_path, fake) as bot:
        await bot.ask("pancakes please")
        await bot.ask("with blueberries")
        await bot.ask("/new")
        await fake.wait_for_requests(3)  # the archive's consolidation call, held open
        await bot.ask("waffles now")
        assert (await bot.ask("/resume 1")).startswith("Resumed the session of 'pancakes please' (4 messages)")
        release.set()
        await bot.app.memory.idle()
        assert "Pancakes." in (bot.config.workspace / "memory" / "HISTORY.md").read_text()
        await bot.ask("and syrup?")
        chats = [body for body in fake.requests if "save_memory" not in json.dumps(body.get("tools") or [])]
        assert chats[-1]["messages"][1]["content"].endswith("pancakes please")  # still shown, as it was
    store = SessionStore(bot.config.state_dir / "sessions")  # as the next start reads it
    assert store.get("test:1").consolidated == 4
    assert [archive.first_words for archive in store.archives("test:1")] == ["waffles now"]  # no stray file

"""The system prompt follows the files it reads: an edit, a new skill folder, a memory update."""

import os
from pathlib import Path

from bot.agent.context.builder import ContextBuilder, FileCache
from bot.bus import ChatRef, InboundMessage, Trust
from bot.memory.files import MemoryScope, scope_for
from bot.skills import SkillLibrary


def test_system_prompt_is_rebuilt_when_a_file_it_reads_changes(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "skills").mkdir(parents=True)
    agents = workspace / "AGENTS.md"
    agents.write_text("Be kind.")
    builder = ContextBuilder(workspace, "UTC", skills=SkillLibrary([workspace / "skills"]))
    message = InboundMessage(ChatRef("telegram", "42"), sender_id="42", text="hi", trust=Trust.OWNER)
    scope = scope_for(workspace, message)
    first = builder.system_prompt(message, scope)
    assert "Be kind." in first and "## Skills" not in first
    assert builder.system_prompt(message, scope) == first

    agents.write_text("Be brief and kind.")
    os.utime(agents, ns=(0, 1))  # a different mtime even on a coarse clock
    assert "Be brief and kind." in builder.system_prompt(message, scope)

    skill = workspace / "skills" / "notes" / "SKILL.md"
    skill.parent.mkdir()
    skill.write_text("---\nname: notes\ndescription: Keep notes.\n---\nBody\n")
    os.utime(workspace / "skills", ns=(0, 1))
    assert "- notes: Keep notes." in builder.system_prompt(message, scope)

    scope.memory_file.parent.mkdir(parents=True, exist_ok=True)
    scope.memory_file.write_text("Likes tea.")
    assert "Likes tea." in builder.system_prompt(message, scope)


def test_the_file_cache_keeps_the_files_read_most_lately(tmp_path: Path) -> None:
    cache = FileCache(capacity=10)
    for n in range(100):
        (tmp_path / f"MEMORY{n}.md").write_text(f"chat {n}")
        assert cache.read(tmp_path / f"MEMORY{n}.md") == f"chat {n}"
    assert cache.cached == 10
    (tmp_path / "MEMORY0.md").write_text("changed while forgotten")
    assert cache.read(tmp_path / "MEMORY0.md") == "changed while forgotten"


def owner_turn(workspace: Path) -> tuple[InboundMessage, MemoryScope]:
    message = InboundMessage(ChatRef("telegram", "42"), sender_id="42", text="hi", trust=Trust.OWNER)
    scope = scope_for(workspace, message)
    scope.directory.mkdir(parents=True, exist_ok=True)
    return message, scope


def test_a_memory_file_rewritten_between_turns_is_in_the_next_prompt(tmp_path: Path) -> None:
    builder = ContextBuilder(tmp_path, "UTC")
    message, scope = owner_turn(tmp_path)
    scope.record([], "Likes tea.")
    assert "Likes tea." in builder.system_prompt(message, scope)
    scope.record([], "Likes tee.")  # as consolidation writes it: the same size, a new file
    assert "Likes tee." in builder.system_prompt(message, scope)
    scope.memory_file.write_text("Likes the.")  # edited in place
    os.utime(scope.memory_file, ns=(0, 1))
    assert "Likes the." in builder.system_prompt(message, scope)
    scope.memory_file.unlink()
    assert "MEMORY.md)\n" not in builder.system_prompt(message, scope)


def test_the_prompt_follows_the_memory_share_of_the_window(tmp_path: Path) -> None:
    share = [1000]
    builder = ContextBuilder(tmp_path, "UTC", memory_chars=lambda: share[0])
    message, scope = owner_turn(tmp_path)
    scope.record([], "x" * 500)
    assert "only its first" not in builder.system_prompt(message, scope)
    share[0] = 100
    assert "only its first 100 are shown" in builder.system_prompt(message, scope)


def test_owners_guests_and_personas_each_get_their_own_prompt(tmp_path: Path) -> None:
    builder = ContextBuilder(tmp_path, "UTC")
    message, scope = owner_turn(tmp_path)
    guest = InboundMessage(ChatRef("telegram", "42"), sender_id="7", text="hi", trust=Trust.GUEST)
    persona = tmp_path / "pirate.md"
    persona.write_text("Talk like a pirate.")
    owner_prompt = builder.system_prompt(message, scope)
    assert "exec `grep" in owner_prompt and "exec `grep" not in builder.system_prompt(guest, scope)
    assert "Talk like a pirate." in builder.system_prompt(message, scope, persona)
    persona.write_text("Talk like a sailor.")
    os.utime(persona, ns=(0, 1))
    assert "Talk like a sailor." in builder.system_prompt(message, scope, persona)
    assert builder.system_prompt(message, scope) == owner_prompt


def test_a_header_names_the_local_minute_of_each_message_across_minutes_and_a_clock_change(tmp_path: Path) -> None:
    builder = ContextBuilder(tmp_path, "Europe/Berlin")
    chat = ChatRef("telegram", "42")

    def header(at: float) -> str:
        return builder.runtime_header(InboundMessage(chat, "42", "hi", created_at=at)).split(" · ")[-1]

    change = 1_698_541_200.0  # 2023-10-29 01:00 UTC: Berlin's clocks go back from 03:00 to 02:00
    assert header(change - 60.5) == "2023-10-29 02:58 Sunday]"
    assert header(change - 0.5) == "2023-10-29 02:59 Sunday]"
    assert header(change - 0.0001) == "2023-10-29 02:59 Sunday]"
    assert header(change) == "2023-10-29 02:00 Sunday]"
    assert header(change + 59.9) == "2023-10-29 02:00 Sunday]"
    assert header(change + 60) == "2023-10-29 02:01 Sunday]"
    assert header(change - 30) == "2023-10-29 02:59 Sunday]"

"""The system prompt follows the files it reads: an edit, a new skill folder, a memory update."""

import os
from pathlib import Path

from bot.agent.context import ContextBuilder, FileCache
from bot.agent.memory.files import scope_for
from bot.bus import ChatRef, InboundMessage, Trust
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

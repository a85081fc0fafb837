"""Prompts are reused while their files and inputs stay the same, and only those of the chats active lately."""

import os
from pathlib import Path

from bot.agent.context.prompt_cache import SystemPromptCache, stamp


def test_a_prompt_is_reused_until_a_file_or_an_input_changes(tmp_path: Path) -> None:
    memory = tmp_path / "MEMORY.md"
    memory.write_text("tea")
    paths = (str(memory), str(tmp_path / "absent.md"))
    cache = SystemPromptCache()
    cache.put("chat", paths, tuple(map(stamp, paths)), (100,), "prompt")
    assert cache.get("chat", (100,)) == "prompt"
    assert cache.get("chat", (200,)) is None
    (tmp_path / "absent.md").write_text("now here")
    assert cache.get("chat", (100,)) is None
    cache.put("chat", paths, tuple(map(stamp, paths)), (100,), "prompt 2")
    os.utime(memory, ns=(0, 1))
    assert cache.get("chat", (100,)) is None


def test_only_the_prompts_of_the_chats_used_lately_are_kept(tmp_path: Path) -> None:
    cache = SystemPromptCache(capacity=10)
    for n in range(100):
        cache.put(n, (), (), (), f"prompt {n}")
        assert cache.get(0, ()) == "prompt 0"  # used each time: never the least recent
    assert cache.cached == 10
    assert cache.get(50, ()) is None and cache.get(99, ()) == "prompt 99"

"""Long-term memory scopes: which MEMORY.md and HISTORY.md belong to a chat."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from bot.bus import InboundMessage, Trust

MAIN_SCOPE_CHANNELS = frozenset({"console"})


@dataclass(frozen=True, slots=True)
class MemoryScope:
    """A folder holding one MEMORY.md (facts) and one HISTORY.md (log)."""

    directory: Path
    is_main: bool

    @property
    def memory_file(self) -> Path:
        return self.directory / "MEMORY.md"

    @property
    def history_file(self) -> Path:
        return self.directory / "HISTORY.md"


def scope_for(workspace: Path, message: InboundMessage) -> MemoryScope:
    """Owner DMs and the console share the main memory; every other chat has its own."""
    chat = message.chat
    if chat.channel in MAIN_SCOPE_CHANNELS or (message.is_direct and message.trust is Trust.OWNER):
        return MemoryScope(workspace / "memory", is_main=True)
    folder = re.sub(r"[^\w.-]", "_", f"{chat.channel}_{chat.chat_id}")
    return MemoryScope(workspace / "memory" / "chats" / folder, is_main=False)

"""The file tools' writes to MEMORY.md and HISTORY.md: checked like consolidation's, facts sourced, the cap kept."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from bot.errors import ToolError
from bot.memory.facts import with_provenance
from bot.memory.files import MEMORY_CAP_CHARS
from bot.memory.hygiene import added_lines, refusal
from bot.tools.base import ToolContext

logger = logging.getLogger(__name__)

MEMORY_FILES = frozenset({"MEMORY.md", "HISTORY.md"})


class MemoryFileGuard:
    """Looks at each file-tool write under the memory folder before it happens (a `bot.tools.files.WriteCheck`)."""

    def __init__(self, memory_root: Path, timezone: str, clock: Callable[[], float] = time.time) -> None:
        self._root = memory_root
        self._zone = ZoneInfo(timezone)
        self._clock = clock

    def __call__(self, path: Path, new: str, ctx: ToolContext) -> str:
        """The text to write (new facts sourced); ToolError when it adds an injection or a secret, or breaks the cap."""
        if path.name not in MEMORY_FILES or not path.is_relative_to(self._root.expanduser().resolve()):
            return new
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        if why := refusal("\n".join(added_lines(old, new))):
            logger.warning("[%s] refused a write to %s: %s", ctx.session_key, path.name, why)
            raise ToolError(f"{path.name} was not changed: {why}. Write it again without that.")
        if path.name != "MEMORY.md":
            return new
        day = datetime.fromtimestamp(self._clock(), self._zone)
        text = with_provenance(old, new, ctx.session_key, f"{day:%Y-%m-%d}") + ("\n" if new.endswith("\n") else "")
        if len(text) > MEMORY_CAP_CHARS and len(text) > len(old):
            raise ToolError(
                f"MEMORY.md was not changed: it would have {len(text)} characters (with the sources of new facts) "
                f"and must stay under {MEMORY_CAP_CHARS}. Merge duplicates and drop stale or minor facts."
            )
        return text

"""The terminal side of the console: Markdown rendered for a terminal, streamed line by line, and a line editor."""

from __future__ import annotations

import io
import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

_TRAILING_SPACES = re.compile(r" +\n")
HARD_BREAK = "  "  # Markdown's line break that is ignored where a block ends (a backslash would be shown there)


def render_markdown(text: str, width: int | None = None) -> str:
    """Markdown as terminal text with ANSI styles (rich), each line break kept as chat apps keep it; blank text
    stays a blank line."""
    if not text.strip():
        return text if text.endswith("\n") else text + "\n"
    from rich.console import Console
    from rich.markdown import Markdown

    buffer = io.StringIO()
    columns = width or shutil.get_terminal_size((100, 24)).columns
    markdown = Markdown(keep_line_breaks(text))
    Console(file=buffer, force_terminal=True, width=columns, color_system="standard").print(markdown)
    # Rendered a few lines at a time: no spacing before a piece, and no padding that wraps when the window narrows.
    return _TRAILING_SPACES.sub("\n", buffer.getvalue()).lstrip("\n")


def keep_line_breaks(text: str) -> str:
    """Markdown whose single line breaks stay breaks (Markdown joins such lines into one paragraph, so a list of
    lines like /help's ran together); code fences are left as they are."""
    lines = text.split("\n")
    in_fence = False
    for index, line in enumerate(lines[:-1]):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        elif not in_fence and line.strip():
            lines[index] = line + HARD_BREAK
    return "\n".join(lines)


class LineBlocks:
    """Cuts streamed text into whole lines, keeping a fenced code block together, so each piece renders whole."""

    def __init__(self) -> None:
        self._pending = ""
        self._block: list[str] = []
        self._in_fence = False

    def feed(self, text: str) -> list[str]:
        """Add streamed text; return the pieces now complete: single lines, or a whole code block."""
        self._pending += text
        ready: list[str] = []
        while "\n" in self._pending:
            line, self._pending = self._pending.split("\n", 1)
            self._block.append(line)
            if line.lstrip().startswith("```"):
                self._in_fence = not self._in_fence
            if not self._in_fence:
                ready.append("\n".join(self._block) + "\n")
                self._block = []
        return ready

    def finish(self) -> str:
        """Whatever is left when the stream ends."""
        rest = "\n".join([*self._block, self._pending]) if self._block else self._pending
        self._pending, self._block, self._in_fence = "", [], False
        return rest


async def prompt_lines(history_file: Path, prompt: str) -> AsyncIterator[str | None]:
    """Lines typed at a prompt_toolkit prompt with history in `history_file`; None at Ctrl-D or Ctrl-C."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory

    history_file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    history_file.touch(mode=0o600, exist_ok=True)
    session: PromptSession[str] = PromptSession(history=FileHistory(str(history_file)))
    while True:
        try:
            yield await session.prompt_async(prompt)
        except (EOFError, KeyboardInterrupt):
            yield None
            return

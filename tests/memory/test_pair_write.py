"""MEMORY.md and HISTORY.md change as one: a SIGKILL at any moment of a change leaves the old pair or the new one
once the next consolidation finishes or undoes it, and the temp files a kill left are swept."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

from bot.memory.pair_write import MARKER, finish_pair, write_pair

WRITER = """
import sys
from pathlib import Path
from bot.memory.pair_write import write_pair

folder = Path(sys.argv[1])
for n in range(1, 100_000):
    history = (folder / "HISTORY.md").read_text() if (folder / "HISTORY.md").exists() else "# History\\n"
    write_pair(folder, f"round {n}\\n" + "fact\\n" * 2000, history + f"\\nentry {n}\\n")
    print(n, flush=True)
"""


def rounds(folder: Path) -> tuple[int, int]:
    """The round MEMORY.md was written in, and the last round HISTORY.md has an entry of."""
    memory = int((folder / "MEMORY.md").read_text().split("\n", 1)[0].split()[1])
    history = int((folder / "HISTORY.md").read_text().strip().rsplit("\n", 1)[-1].split()[1])
    return memory, history


async def test_a_kill_at_any_moment_of_a_change_leaves_the_pair_whole(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    folder.mkdir()
    for kill in range(8):
        writer = await asyncio.create_subprocess_exec(
            sys.executable, "-c", WRITER, str(folder), stdout=asyncio.subprocess.PIPE
        )
        assert writer.stdout is not None
        for _ in range(1 + kill):  # each kill a few changes later, at whatever step the writer is in
            await writer.stdout.readline()
        await asyncio.sleep(0.001 * kill)
        writer.send_signal(signal.SIGKILL)
        await writer.wait()
        finish_pair(folder)
        memory, history = rounds(folder)
        assert memory == history, f"kill {kill}: MEMORY.md of round {memory}, HISTORY.md up to {history}"
        assert not (folder / MARKER).exists() and not list(folder.glob(".*.staged"))


def test_an_uncommitted_change_is_undone_and_stale_temp_files_are_swept(tmp_path: Path) -> None:
    write_pair(tmp_path, "old facts\n", "# History\n\nold entry\n")
    (tmp_path / ".MEMORY.md.staged").write_text("half a change")  # staged, never committed by the marker
    stale = tmp_path / ".MEMORY.md.abc123.tmp"
    stale.write_text("torn")
    os.utime(stale, (time.time() - 7200, time.time() - 7200))
    fresh = tmp_path / ".HISTORY.md.def456.tmp"  # a write under way right now: left alone
    fresh.write_text("being written")
    finish_pair(tmp_path)
    assert (tmp_path / "MEMORY.md").read_text() == "old facts\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".HISTORY.md.def456.tmp", "HISTORY.md", "MEMORY.md"]


def test_a_committed_change_is_finished(tmp_path: Path) -> None:
    write_pair(tmp_path, "old facts\n", "# History\n")
    (tmp_path / ".MEMORY.md.staged").write_text("new facts\n")
    (tmp_path / MARKER).write_text("MEMORY.md\nHISTORY.md\n")  # killed after the marker, HISTORY.md already renamed
    finish_pair(tmp_path)
    assert (tmp_path / "MEMORY.md").read_text() == "new facts\n" and not (tmp_path / MARKER).exists()

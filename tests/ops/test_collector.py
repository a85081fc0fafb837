"""The collector's full passes skip what start-up built; garbage made later is still collected."""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import cast

from bot.app.gateway import Gateway
from bot.app.serve import _settle

ROOT = Path(__file__).resolve().parents[2]


def test_what_start_up_built_is_frozen_and_later_cycles_and_dropped_objects_are_still_freed() -> None:
    script = textwrap.dedent(
        """
        import gc, weakref
        from bot.ops.collector import freeze_started

        class Node:
            pass

        built = [Node() for _ in range(1000)]
        frozen = freeze_started()
        assert frozen >= 1000 and gc.get_freeze_count() == frozen
        freed = []
        weakref.finalize(built[0], freed.append, "dropped")
        built.clear()  # frozen, but no longer referred to: freed by its reference count
        cycle = Node()
        cycle.me = cycle
        weakref.finalize(cycle, freed.append, "cycle")
        del cycle
        gc.collect()
        print(sorted(freed))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['cycle', 'dropped']"


async def test_the_gateway_freezes_its_heap_only_once_the_model_is_warm() -> None:
    gc.unfreeze()  # a gateway an earlier test of this worker served in-process may have frozen it
    asked, warm = asyncio.Event(), asyncio.Event()

    async def warmed() -> None:
        asked.set()
        await warm.wait()

    settling = asyncio.create_task(_settle(cast(Gateway, SimpleNamespace(agent=SimpleNamespace(warmed=warmed)))))
    try:
        await asked.wait()
        assert gc.get_freeze_count() == 0 and not settling.done()
        warm.set()
        await settling
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()  # the test process keeps collecting as before

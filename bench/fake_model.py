"""The fake model for benches, in its own process: echoes chats and answers memory consolidation with save_memory.

Run by the benches: python bench/fake_model.py [--latency 0] prints `PORT <n>` and serves until SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import signal

from rig import ROOT  # noqa: F401  (puts the repository on sys.path)

from bot.memory.index.rendering import RECALL_END
from tests.fakes.openai_server import FakeLLM, Reply, Text, ToolCalls, echo


def answer(body: dict) -> Reply:
    """A save_memory call for consolidation requests, an echo for everything else (of the message only, as a model
    answers it: passages recalled before it are not echoed, so the reply is as long with auto-recall as without)."""
    if any(tool["function"]["name"] == "save_memory" for tool in body.get("tools") or []):
        entry = {"history_entry": "Talked about the week's plans.", "memory_update": "# Memory\n\n- Plans a trip."}
        return ToolCalls((("save_memory", entry),))
    reply = echo(body)
    if isinstance(reply, Text) and RECALL_END in reply.content:
        return Text("echo: " + reply.content.partition(RECALL_END)[2].strip())
    return reply


async def serve(latency: float) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    async with FakeLLM(latency=latency, default=answer) as fake:
        print(f"PORT {fake.port}", flush=True)
        await stop.wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.0)
    asyncio.run(serve(parser.parse_args().latency))

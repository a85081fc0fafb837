"""The run entry points: the console chat, and the gateway served until a signal or a lost lease."""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from collections.abc import Coroutine
from typing import Any

from bot.agents.inbox import staging_folder
from bot.app.agent_wiring import AgentApp
from bot.app.backend import stores_for
from bot.app.gateway import Gateway
from bot.app.rosters import answering
from bot.cancelling import cancel_and_wait
from bot.cluster.roles import Role
from bot.config.schema import Config
from bot.llm.types import Provider
from bot.ops.allocator import QuietTrim, limit_arenas
from bot.ops.collector import freeze_started
from bot.ops.gateway_lock import AlreadyRunning
from channels.console.channel import ConsoleChannel
from channels.gateway.manager import ChannelManager

logger = logging.getLogger(__name__)

NO_CHANNEL = (
    "No chat channel is enabled, so nobody can reach the bot yet. Enable one in the config "
    "(for example channels.telegram.enabled: true with its token) and restart, or use "
    "`relaybot chat`. Serving anyway; Ctrl-C stops."
)


def run_loop(main: Coroutine[Any, Any, int]) -> int:
    """Run `main` to its end on uvloop where it is installed (about a tenth less CPU per message), else on
    asyncio's own loop."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    return uvloop.run(main)


async def run_console(config: Config, message: str | None, provider: Provider | None = None) -> int:
    """`relaybot chat`: the agent on a terminal; returns the exit code."""
    agent = AgentApp(config, provider)
    manager = ChannelManager(agent.bus, agent.events)
    history = config.state_dir / "chat_history"
    staging = staging_folder(config.state_dir)
    console = ConsoleChannel(manager.publisher("console"), agent.events, history_file=history, staging=staging)
    manager.add(console)
    async with answering(agent):
        await manager.start()
        try:
            await manager.ready("console")
            if message is not None:
                reply = await console.ask(message)
                return 1 if reply.kind == "error" else 0
            await console.repl()
            return 0
        finally:
            await manager.stop()


async def run_gateway(config: Config, role: Role = "all") -> int:
    """`relaybot run`: serve until SIGINT or SIGTERM; 1 at once when another gateway holds this home."""
    limit_arenas()  # before the gateway's threads take arenas of their own
    lock = stores_for(config).process_lock()
    if lock is None:
        await _serve(config, role)
        return 0
    try:
        lock.acquire()
    except AlreadyRunning as exc:
        print(str(exc), file=sys.stderr, flush=True)
        return 1
    try:
        await _serve(config)
    finally:
        lock.release()
    return 0


async def _serve(config: Config, role: Role = "all") -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    gateway = Gateway(config, role=role)
    trim = QuietTrim(gateway.agent.events)
    reloads: set[asyncio.Task[object]] = set()

    def reload_on_hangup() -> None:
        task: asyncio.Task[object] = asyncio.create_task(gateway.reload(), name="reload")
        reloads.add(task)
        task.add_done_callback(reloads.discard)

    loop.add_signal_handler(signal.SIGHUP, reload_on_hangup)
    if role == "worker":
        logger.info("worker %s starting", getattr(gateway.agent.bus, "consumer", ""))
    elif gateway.names:
        logger.info("gateway starting with channels: %s", ", ".join(gateway.names))
    else:
        print(NO_CHANNEL, file=sys.stderr, flush=True)
    settling: asyncio.Task[None] | None = None
    stopping = asyncio.create_task(stop.wait(), name="stop signal")
    lost = asyncio.create_task(gateway.lost_lease.wait(), name="lost lease")
    try:
        started = await _started(gateway, stopping)
        try:
            if started:
                settling = asyncio.create_task(_settle(gateway), name="settle heap")
                await asyncio.wait([stopping, lost], return_when=asyncio.FIRST_COMPLETED)
        finally:
            await gateway.stop()
            await trim.stop()
    finally:
        await cancel_and_wait(stopping, lost, settling, *reloads)
    logger.info("gateway stopped")


async def _settle(gateway: Gateway) -> None:
    """Once the first model call's modules are loaded, freeze what start-up built out of the collector's passes."""
    await gateway.agent.warmed()
    freeze_started()


async def _started(gateway: Gateway, stopping: asyncio.Task[bool]) -> bool:
    """Start the gateway; False when a signal came first (a standby waits in start for its leases)."""
    starting = asyncio.create_task(gateway.start(), name="gateway start")
    await asyncio.wait([starting, stopping], return_when=asyncio.FIRST_COMPLETED)
    if starting.done():
        starting.result()
        return True
    await cancel_and_wait(starting)
    return False

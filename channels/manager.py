"""Starts channels and routes outbound messages to them, one worker per channel."""

from __future__ import annotations

import asyncio
import logging

from bot.bus import MessageBus, OutboundMessage
from channels.base import Channel

logger = logging.getLogger(__name__)


class ChannelManager:
    """Owns the channels' lifecycles and their outbound workers."""

    def __init__(self, bus: MessageBus, channels: list[Channel]) -> None:
        self._bus = bus
        self._channels = {channel.name: channel for channel in channels}
        self._queues: dict[str, asyncio.Queue[OutboundMessage]] = {}
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        """Start every channel and begin routing outbound messages."""
        for name, channel in self._channels.items():
            await channel.start()
            queue: asyncio.Queue[OutboundMessage] = asyncio.Queue()
            self._queues[name] = queue
            self._tasks.append(asyncio.create_task(self._deliver(channel, queue), name=f"outbound:{name}"))
        self._tasks.append(asyncio.create_task(self._route(), name="outbound-router"))

    async def stop(self) -> None:
        """Stop routing, then stop channels in reverse order."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()
        for channel in reversed(list(self._channels.values())):
            await channel.stop()

    async def _route(self) -> None:
        while True:
            message = await self._bus.consume_outbound()
            queue = self._queues.get(message.chat.channel)
            if queue is None:
                logger.warning("[%s] no channel %r to deliver to; dropped", message.chat.session_key, message.chat.channel)
                continue
            queue.put_nowait(message)

    async def _deliver(self, channel: Channel, queue: asyncio.Queue[OutboundMessage]) -> None:
        while True:
            message = await queue.get()
            try:
                await channel.send(message)
            except Exception:
                logger.exception("[%s] delivery failed for %s", message.chat.session_key, message.id)

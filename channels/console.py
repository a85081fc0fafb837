"""The terminal chat: reads lines, streams replies as they arrive."""

from __future__ import annotations

import asyncio
import sys
import threading
from typing import ClassVar, TextIO

from bot.bus import ChatRef, InboundMessage, OutboundMessage, Trust
from bot.events import Event, EventBus, StreamDelta
from channels.base import Channel, Publish

CONSOLE_CHAT = ChatRef("console", "local")


class ConsoleChannel(Channel):
    """A channel on stdin/stdout for the machine's owner."""

    name: ClassVar[str] = "console"

    def __init__(self, publish: Publish, events: EventBus, out: TextIO = sys.stdout) -> None:
        self._publish = publish
        self._out = out
        self._events = events
        self._unsubscribe = lambda: None
        self._streamed: set[str] = set()
        self._waiting: dict[str, asyncio.Future[OutboundMessage]] = {}

    async def start(self) -> None:
        self._unsubscribe = self._events.subscribe(self._on_event)

    async def stop(self) -> None:
        self._unsubscribe()

    async def send(self, message: OutboundMessage) -> None:
        """Print a message; a reply whose text was streamed only ends its line."""
        if message.in_reply_to in self._streamed:
            self._streamed.discard(message.in_reply_to)
            self._out.write("\n")
        else:
            self._out.write(message.text + "\n")
        self._out.flush()
        waiter = self._waiting.pop(message.in_reply_to or "", None)
        if waiter and not waiter.done() and message.kind in ("reply", "error"):
            waiter.set_result(message)

    async def ask(self, text: str) -> OutboundMessage:
        """Send one line as the owner and wait for the agent's reply."""
        message = InboundMessage(CONSOLE_CHAT, sender_id="owner", text=text, trust=Trust.OWNER, stream=True)
        waiter: asyncio.Future[OutboundMessage] = asyncio.get_running_loop().create_future()
        self._waiting[message.id] = waiter
        await self._publish(message)
        return await waiter

    async def repl(self, prompt: str = "you> ") -> None:
        """Chat until end of input (Ctrl-D) or /exit."""
        lines = _stdin_lines()
        while True:
            self._out.write(prompt)
            self._out.flush()
            line = await lines.get()
            if line is None or line.strip() in ("/exit", "/quit"):
                self._out.write("\n")
                return
            if line.strip():
                await self.ask(line.strip())

    def _on_event(self, event: Event) -> None:
        if isinstance(event, StreamDelta) and event.session_key == CONSOLE_CHAT.session_key:
            self._streamed.add(event.turn_id)
            self._out.write(event.text)
            self._out.flush()


def _stdin_lines() -> asyncio.Queue[str | None]:
    """Lines from stdin, read on a daemon thread so a pending read never blocks shutdown."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str | None] = asyncio.Queue()

    def read() -> None:
        for line in sys.stdin:
            loop.call_soon_threadsafe(queue.put_nowait, line)
        loop.call_soon_threadsafe(queue.put_nowait, None)

    threading.Thread(target=read, name="console-stdin", daemon=True).start()
    return queue

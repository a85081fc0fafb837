"""The terminal chat: reads lines, streams replies as they arrive."""

from __future__ import annotations

import asyncio
import sys
import threading
from typing import ClassVar, TextIO

from bot.bus import ChatRef, InboundMessage, OutboundMessage, Trust
from bot.events import Event, EventBus, ReasoningDelta, StreamDelta, TurnFinished
from channels.base import Channel, Publish

CONSOLE_CHAT = ChatRef("console", "local")
DIM, RESET = "\x1b[2m", "\x1b[0m"


class ConsoleChannel(Channel):
    """A channel on stdin/stdout for the machine's owner."""

    name: ClassVar[str] = "console"

    def __init__(self, publish: Publish, events: EventBus, out: TextIO | None = None) -> None:
        self._publish = publish
        self._out = out or sys.stdout  # looked up now, not at import, so a replaced stdout is honoured
        self._events = events
        self._unsubscribe = lambda: None
        self._streamed: dict[str, str] = {}  # turn id -> msg id of the text last printed
        self._waiting: dict[str, asyncio.Future[OutboundMessage]] = {}

    async def start(self) -> None:
        self._unsubscribe = self._events.subscribe(self._on_event)

    async def stop(self) -> None:
        self._unsubscribe()

    async def send(self, message: OutboundMessage) -> None:
        """Print a message; a final reply whose text was streamed only ends its line (an error is always shown)."""
        final = message.kind in ("reply", "error")
        streamed = self._end_streamed_line(message.in_reply_to)
        if not (streamed and message.kind == "reply"):
            self._out.write(message.text + "\n")
        self._out.flush()
        if final:
            self._finish(message.in_reply_to or "", message)

    async def ask(self, text: str) -> OutboundMessage:
        """Send one line as the owner and wait for the turn's reply (empty text when the turn sent none)."""
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
            self._streamed[event.turn_id] = event.msg_id
            self._out.write(event.text)
            self._out.flush()
        elif isinstance(event, ReasoningDelta) and event.session_key == CONSOLE_CHAT.session_key:
            self._streamed.setdefault(event.turn_id, event.msg_id)
            self._out.write(f"{DIM}{event.text}{RESET}")
            self._out.flush()
        elif isinstance(event, TurnFinished) and not event.replied and event.turn_id in self._waiting:
            # No reply will come (answered through `message`, or stopped): stop waiting for one.
            self._end_streamed_line(event.turn_id)
            self._out.flush()
            self._finish(event.turn_id, OutboundMessage(CONSOLE_CHAT, "", in_reply_to=event.turn_id))

    def _end_streamed_line(self, turn_id: str | None) -> bool:
        """End the line of text streamed for a turn, if any; True when there was one."""
        if turn_id not in self._streamed:
            return False
        del self._streamed[turn_id]
        self._out.write("\n")
        return True

    def _finish(self, turn_id: str, message: OutboundMessage) -> None:
        waiter = self._waiting.pop(turn_id, None)
        if waiter and not waiter.done():
            waiter.set_result(message)


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

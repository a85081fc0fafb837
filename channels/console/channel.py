"""The terminal chat: reads lines (a line editor on a terminal), streams replies as they arrive."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import ClassVar, TextIO

from bot.bus import ChatRef, InboundMessage, OutboundMessage, Trust
from bot.commands.catalogue import CONSOLE_CHANNEL, EXIT, FILE
from bot.commands.parse import parse_command
from bot.events import Event, EventBus, ReasoningDelta, StreamDelta, ToolCalled, TurnFinished
from channels.base import Channel, Publish
from channels.console.files import USAGE, parse_file_command, stage_file
from channels.console.terminal import LineBlocks, prompt_lines, render_markdown
from channels.numbered import NumberedChoices

CONSOLE_CHAT = ChatRef(CONSOLE_CHANNEL, "local")
OPENING = "Write a message and press Enter; /help lists the commands, /exit or Ctrl-D leaves."
DIM, RESET = "\x1b[2m", "\x1b[0m"


class ConsoleChannel(Channel):
    """A channel on stdin/stdout for the machine's owner."""

    name: ClassVar[str] = "console"

    def __init__(
        self,
        publish: Publish,
        events: EventBus,
        out: TextIO | None = None,
        history_file: Path | None = None,
        interactive: bool | None = None,
        staging: Path | None = None,
    ) -> None:
        self._publish = publish
        self._staging = staging  # where /file copies a file for the router to hand to the agent; None: no /file
        self._out = out or sys.stdout  # looked up now, not at import, so a replaced stdout is honoured
        self._events = events
        self._history_file = history_file
        # On a terminal: a line editor that stays live while replies stream, and Markdown rendered.
        self._interactive = sys.stdin.isatty() and self._out.isatty() if interactive is None else interactive
        self._unsubscribe = lambda: None
        self._streamed: dict[str, LineBlocks] = {}
        self._reasoning: dict[str, LineBlocks] = {}  # thinking text, shown dimmed
        self._waiting: dict[str, asyncio.Future[OutboundMessage]] = {}
        self._choices = NumberedChoices()
        self._question: asyncio.Future[OutboundMessage] | None = None  # piped input answers a question first

    async def start(self) -> None:
        self._unsubscribe = self._events.subscribe(self._on_event)

    async def stop(self) -> None:
        self._unsubscribe()

    async def send(self, message: OutboundMessage) -> None:
        """Print a message; a final reply whose text was streamed only ends its line (an error is always shown)."""
        final = message.kind in ("reply", "error")
        streamed = self._end_streamed_line(message.in_reply_to)
        if not (streamed and message.kind == "reply"):
            self._write(self._choices.shown(message) + "\n")
        if message.choices and self._question is not None and not self._question.done():
            self._question.set_result(message)
        self._out.flush()
        if final:
            self._finish(message.in_reply_to or "", message)

    async def ask(self, text: str) -> OutboundMessage:
        """Send one line as the owner and wait for the turn's reply (empty text when the turn sent none)."""
        return await (await self._submit(text))

    async def _submit(self, text: str) -> asyncio.Future[OutboundMessage]:
        """Publish one line as the owner; the returned future resolves with the turn's reply."""
        waiter: asyncio.Future[OutboundMessage] = asyncio.get_running_loop().create_future()
        if (pressed := self._choices.press(CONSOLE_CHAT, text)) is not None:
            press, label = pressed
            pressing = InboundMessage(CONSOLE_CHAT, sender_id="owner", text=label, trust=Trust.OWNER, press=press)
            await self._publish(pressing)
            waiter.set_result(OutboundMessage(CONSOLE_CHAT, ""))  # a press gets no reply of its own
            return waiter
        if parse_command(text) is FILE:
            return await self._send_file(text, waiter)
        message = InboundMessage(CONSOLE_CHAT, sender_id="owner", text=text, trust=Trust.OWNER, stream=True)
        self._waiting[message.id] = waiter
        await self._publish(message)
        return waiter

    async def _send_file(self, line: str, waiter: asyncio.Future[OutboundMessage]) -> asyncio.Future[OutboundMessage]:
        """`/file PATH [words]`: the file copied to the staging folder and sent with the words, as an upload is."""
        command = parse_file_command(line)
        if command is None or self._staging is None:
            return self._said(USAGE if self._staging else "This terminal chat cannot send files.", waiter)
        try:
            attachment = await asyncio.to_thread(stage_file, command.path, self._staging, CONSOLE_CHAT)
        except OSError as exc:
            return self._said(f"Could not send {command.path}: {exc.strerror or exc}.", waiter)
        message = InboundMessage(
            CONSOLE_CHAT, "owner", command.text, Trust.OWNER, stream=True, attachments=(attachment,)
        )
        self._waiting[message.id] = waiter
        await self._publish(message)
        return waiter

    def _said(self, text: str, waiter: asyncio.Future[OutboundMessage]) -> asyncio.Future[OutboundMessage]:
        """A line the terminal answers itself, with no turn: the waiter resolves at once."""
        self._write(text + "\n")
        self._out.flush()
        waiter.set_result(OutboundMessage(CONSOLE_CHAT, text))
        return waiter

    async def repl(self, prompt: str = "you> ") -> None:
        """Chat until end of input (Ctrl-D), /exit or /quit; on a terminal, typing goes on while a reply streams."""
        if not self._interactive:
            async for line in _piped_lines(self._out, prompt):
                if line is None or parse_command(line.strip()) is EXIT:
                    await asyncio.gather(*self._waiting.values())  # turns still waiting on a question end first
                    self._out.write("\n")
                    return
                if line.strip():
                    await self._reply_or_question(await self._submit(line.strip()))
            return
        from prompt_toolkit.patch_stdout import patch_stdout

        history = self._history_file or Path.home() / ".relaybot_history"
        with patch_stdout(raw=True):
            self._out = sys.stdout
            self._out.write(OPENING + "\n")
            async for line in prompt_lines(history, prompt):
                if line is None or parse_command(line.strip()) is EXIT:
                    return
                if line.strip():
                    # The reply is not awaited: the prompt stays live, so /stop reaches the running turn at once.
                    await self._submit(line.strip())

    async def _reply_or_question(self, reply: asyncio.Future[OutboundMessage]) -> None:
        """Wait for the reply, or for a question the turn asks first (the next line answers it)."""
        self._question = asyncio.get_running_loop().create_future()
        await asyncio.wait([reply, self._question], return_when=asyncio.FIRST_COMPLETED)
        self._question = None

    def _write(self, text: str) -> None:
        self._out.write(render_markdown(text) if self._interactive else text)

    def _on_event(self, event: Event) -> None:
        if isinstance(event, StreamDelta) and event.session_key == CONSOLE_CHAT.session_key:
            if not self._interactive:
                self._streamed.setdefault(event.turn_id, LineBlocks())
                self._out.write(event.text)
            else:
                for piece in self._streamed.setdefault(event.turn_id, LineBlocks()).feed(event.text):
                    self._write(piece)
            self._out.flush()
        elif isinstance(event, ReasoningDelta) and event.session_key == CONSOLE_CHAT.session_key:
            self._streamed.setdefault(event.turn_id, LineBlocks())
            if not self._interactive:
                self._out.write(f"{DIM}{event.text}{RESET}")
            elif ready := self._reasoning.setdefault(event.turn_id, LineBlocks()).feed(event.text):
                self._out.write(f"{DIM}{''.join(ready)}{RESET}")
            self._out.flush()
        elif isinstance(event, ToolCalled) and event.session_key == CONSOLE_CHAT.session_key:
            self._show_tool(event)
        elif isinstance(event, TurnFinished) and not event.replied and event.turn_id in self._waiting:
            # No reply will come (answered through `message`, or stopped): stop waiting for one.
            self._end_streamed_line(event.turn_id)
            self._out.flush()
            self._finish(event.turn_id, OutboundMessage(CONSOLE_CHAT, "", in_reply_to=event.turn_id))

    def _show_tool(self, event: ToolCalled) -> None:
        """On a terminal, a dimmed line per tool the turn runs (`message` is its own output); piped output stays
        the replies alone."""
        if not self._interactive or event.tool == "message":
            return
        self._out.write(f"{DIM}· {event.tool} {event.summary}".rstrip() + f"{RESET}\n")
        self._out.flush()

    def _end_streamed_line(self, turn_id: str | None) -> bool:
        """End the text streamed for a turn, if any; True when there was some."""
        blocks = self._streamed.pop(turn_id or "", None)
        if blocks is None:
            return False
        thinking = self._reasoning.pop(turn_id or "", None)
        if thinking is not None and (unsaid := thinking.finish()):
            self._out.write(f"{DIM}{unsaid}{RESET}\n")
        rest = blocks.finish()
        if self._interactive:
            if rest:
                self._write(rest + "\n")
        else:
            self._out.write("\n")
        return True

    def _finish(self, turn_id: str, message: OutboundMessage) -> None:
        waiter = self._waiting.pop(turn_id, None)
        if waiter and not waiter.done():
            waiter.set_result(message)


async def _piped_lines(out: TextIO, prompt: str) -> AsyncIterator[str | None]:
    """Lines from a non-terminal stdin, each after printing the prompt."""
    lines = _stdin_lines()
    while True:
        out.write(prompt)
        out.flush()
        line = await lines.get()
        yield line
        if line is None:
            return


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

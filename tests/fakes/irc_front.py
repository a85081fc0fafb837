"""A line-level front between the bot and a real IRC server: it passes every line both ways, records the bot's
PRIVMSGs, and on demand answers one PRIVMSG itself with an error numeric instead of passing it on, or drops the
connection, as a loaded or unwilling server would.

Wire facts (RFC 1459 §2.3 and §4.4.1, RFC 2812 §2.3, §3.3.1 and §5, the servers' own sources):
- A line is at most 512 bytes with its CRLF. A client's PRIVMSG is `PRIVMSG <target> :<text>`; the server relays it
  as `:<nick>!<user>@<host> PRIVMSG <target> :<text>`, so the sender's prefix counts against the 512.
- A PRIVMSG that arrives gets no answer. One that does not is answered with a numeric whose first parameter is the
  sender's nick: 401 ERR_NOSUCHNICK `<nick> :No such nick or channel name` (ngircd's wording), 404
  ERR_CANNOTSENDTOCHAN `<channel> :Cannot send to channel`, 263 RPL_TRYAGAIN `<command> :Please wait a while and
  try again.` (a command dropped under load), 439 ERR_TARGETTOOFAST `<target> :Target change too fast. Please wait
  <n> seconds.` (Hybrid, ratbox, charybdis).
- A server handles one client's commands in order: `PING <token>` is answered `:<server> PONG <server> :<token>`
  only after everything the client sent before it.
- ngircd reads at most three commands per loop from a user, and throttles one that sends 256 bytes or more in a
  second; a client whose unread input reaches its read buffer is dropped ("Receive buffer space exhausted").
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from tests.fakes.stream_front import LOOPBACK, StreamFront


@dataclass(frozen=True)
class Privmsg:
    """One PRIVMSG the bot wrote: to whom, the text, and whether the front passed it to the server."""

    target: str
    text: str
    passed: bool


class IrcFront(StreamFront):
    """`async with IrcFront(server_port) as front`: the bot connects to `front.port` instead of the server."""

    def __init__(self, server_port: int, server_name: str) -> None:
        super().__init__(server_port)
        self.server_name = server_name
        self.privmsgs: list[Privmsg] = []
        self.connections = 0
        self.transcript: list[str] = []
        """The bot's commands and the server's PONGs as they passed, in order: `PRIVMSG`, `PING`, `PONG` …"""
        self._answers: deque[Callable[[str, str], str] | None] = deque()

    def answer_next(self, numeric: str, text: str, about_target: bool = True) -> None:
        """Answer the bot's next PRIVMSG with `numeric` (about its target, or about the command) instead of passing
        it on."""

        def line(nick: str, target: str) -> str:
            subject = target if about_target else "PRIVMSG"
            return f":{self.server_name} {numeric} {nick} {subject} :{text}"

        self._answers.append(line)

    def passed(self) -> list[Privmsg]:
        """The PRIVMSGs that reached the server, in order."""
        return [message for message in self.privmsgs if message.passed]

    async def _link(self, bot_reader: asyncio.StreamReader, bot_writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        server_reader, server_writer = await asyncio.open_connection(LOOPBACK, self.server_port)
        self._writers += [bot_writer, server_writer]
        nick = ["*"]
        down = asyncio.create_task(self._pipe(server_reader, bot_writer))
        try:
            while raw := await bot_reader.readline():
                line = raw.decode(errors="replace").rstrip("\r\n")
                command, _, params = line.partition(" ")
                self.transcript.append(command.upper())
                if command.upper() == "NICK":
                    nick[0] = params.lstrip(":")
                if command.upper() == "PRIVMSG":
                    await self._privmsg(params, raw, nick[0], bot_writer, server_writer)
                    continue
                server_writer.write(raw)
                await server_writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            down.cancel()
            for writer in (bot_writer, server_writer):
                writer.close()

    async def _privmsg(
        self, params: str, raw: bytes, nick: str, bot_writer: asyncio.StreamWriter, server: asyncio.StreamWriter
    ) -> None:
        target, _, text = params.partition(" :")
        answer = self._answers.popleft() if self._answers else None
        if answer is None:
            server.write(raw)
            await server.drain()
        else:
            bot_writer.write(answer(nick, target).encode() + b"\r\n")
            await bot_writer.drain()
        async with self._changed:
            self.privmsgs.append(Privmsg(target, text, answer is None))
            self._changed.notify_all()

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            while raw := await reader.readline():
                if raw.split(b" ", 2)[1:2] == [b"PONG"]:
                    self.transcript.append("PONG")
                writer.write(raw)
                await writer.drain()
        writer.close()

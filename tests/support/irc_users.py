"""People on a real IRC server, for the tests: a plain client per nick that registers, joins, writes lines and
keeps every PRIVMSG it receives (with the raw line, so a test can measure what the server relayed)."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field

from tests.support.polling import until


@dataclass(frozen=True)
class Received:
    """One PRIVMSG as this user's client got it from the server."""

    sender: str
    target: str
    text: str
    raw: bytes


@dataclass
class IrcUser:
    """One registered nick on the server (`async with IrcUser(port, nick, channels)`)."""

    port: int
    nick: str
    channels: tuple[str, ...] = ()
    received: list[Received] = field(default_factory=list)
    _reader: asyncio.StreamReader | None = None
    _writer: asyncio.StreamWriter | None = None
    _task: asyncio.Task[None] | None = None
    _joined: set[str] = field(default_factory=set)
    _registered: asyncio.Event = field(default_factory=asyncio.Event)

    async def __aenter__(self) -> IrcUser:
        self._reader, self._writer = await asyncio.open_connection("127.0.0.1", self.port)
        self._task = asyncio.create_task(self._read())
        await self.raw(f"NICK {self.nick}", f"USER {self.nick} 0 * :{self.nick}")
        await asyncio.wait_for(self._registered.wait(), 10)
        if self.channels:
            await self.raw(*(f"JOIN {channel}" for channel in self.channels))
            await until(lambda: self._joined >= set(self.channels), 10)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._writer is not None:
            with contextlib.suppress(OSError):
                await self.raw("QUIT :bye")
            self._writer.close()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def raw(self, *lines: str) -> None:
        """Write `lines` to the server as they are."""
        assert self._writer is not None
        self._writer.write(b"".join(line.encode() + b"\r\n" for line in lines))
        await self._writer.drain()

    async def say(self, target: str, text: str) -> None:
        """PRIVMSG `text` to a channel or a nick."""
        await self.raw(f"PRIVMSG {target} :{text}")

    def texts_from(self, nick: str) -> list[str]:
        """The texts of the PRIVMSGs `nick` sent that this user received, in order."""
        return [line.text for line in self.received if line.sender == nick]

    async def wait_for(self, count: int, sender: str, timeout: float = 15) -> list[str]:
        """The texts from `sender`, once there are at least `count` of them."""
        await until(lambda: len(self.texts_from(sender)) >= count, timeout)
        return self.texts_from(sender)

    async def _read(self) -> None:
        assert self._reader is not None
        while raw := await self._reader.readline():
            line = raw.decode(errors="replace").rstrip("\r\n")
            source, _, rest = line[1:].partition(" ") if line.startswith(":") else ("", "", line)
            command, _, params = rest.partition(" ")
            if command == "PING":
                await self.raw(f"PONG {params}")
            elif command in ("001", "376", "422"):
                self._registered.set()
            elif command == "JOIN" and source.split("!")[0] == self.nick:
                self._joined.add(params.lstrip(":").lower())
            elif command == "PRIVMSG":
                target, _, text = params.partition(" :")
                self.received.append(Received(source.split("!")[0], target, text, raw))

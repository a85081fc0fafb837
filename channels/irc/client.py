"""The IRC connection on pydle: registration, SASL or NickServ, joins; lines out in acknowledged windows.

Flood control follows the server's own pace: the bot writes at most a window of lines, then a PING, and writes
the next window only once the PONG is back. A server that throttles a client (ngircd reads three commands or 256
bytes a second from it; Hybrid and its heirs one line a second after a burst of five) simply answers later, and
the bot never has more than one window unread in the server's receive queue, which is what servers disconnect
for ("Excess Flood", "Receive buffer space exhausted").
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pydle

from bot.errors import ChannelError, ChannelUnavailable, DeliveryAmbiguous
from channels.irc.calls import SEND_ERRORS, send_error
from channels.irc.parse import Line

logger = logging.getLogger(__name__)

WINDOW_LINES = 4
WINDOW_BYTES = 1024
"""At most this many lines and bytes are written before the bot waits for the server to acknowledge them."""
ACK_TIMEOUT = 60.0
"""Seconds a window may wait for its PONG; a throttling server answers within a few."""


@dataclass
class _Window:
    """Lines written and not yet acknowledged: the numerics the server answered them with, and their PONG."""

    token: str
    target: str
    done: asyncio.Future[None]
    errors: list[ChannelError] = field(default_factory=list)


class IrcClient(pydle.Client):
    """One registered connection; inbound lines go to `on_line`, connection changes to `on_state`."""

    RECONNECT_ON_ERROR = False  # the channel reconnects, with its own backoff and clock

    def __init__(
        self,
        nick: str,
        on_line: Callable[[Line], Awaitable[None]],
        on_state: Callable[[bool], None],
        account: str = "",
        password: str = "",
        sasl: bool = True,
        channels: Sequence[str] = (),
        ack_timeout: float = ACK_TIMEOUT,
    ) -> None:
        use_sasl = bool(sasl and password)
        super().__init__(
            nick,
            realname="relaybot",
            sasl_username=(account or nick) if use_sasl else None,
            sasl_password=password if use_sasl else None,
            sasl_identity="",
        )
        self._on_line = on_line
        self._on_state = on_state
        self._account = account or nick
        self._password = password
        self._wanted = tuple(channels)
        self._ack_timeout = ack_timeout
        self._tokens = itertools.count(1)
        self._window: _Window | None = None
        self._writing = asyncio.Lock()
        self.sasl_done = False
        self.ready = asyncio.Event()

    @property
    def chantypes(self) -> str:
        """The characters that start a channel name on this server (its CHANTYPES)."""
        return "".join(sorted(self._channel_prefixes))

    async def on_connect(self) -> None:
        await super().on_connect()
        if self._password and not self.sasl_done:
            await self.message("NickServ", f"IDENTIFY {self._account} {self._password}")
        for channel in self._wanted:
            await self.join(channel)
        await self._acknowledged("", ())  # in the channels before the first line is taken as in them
        self.ready.set()
        self._on_state(True)

    async def on_disconnect(self, expected: bool) -> None:
        self.ready.clear()
        window, self._window = self._window, None
        if window is not None and not window.done.done():
            window.done.set_exception(DeliveryAmbiguous("the IRC connection dropped before the server confirmed"))
        self._on_state(False)

    async def on_raw_903(self, message: Any) -> None:
        self.sasl_done = True
        await super().on_raw_903(message)

    async def on_message(self, target: str, by: str, message: str) -> None:
        await self._on_line(Line(by, target, message))

    async def on_ctcp(self, by: str, target: str, what: str, contents: str | None) -> None:
        """An action (/me) or a DCC file offer goes on as its CTCP line; other queries are pydle's to answer."""
        if what.upper() in ("ACTION", "DCC"):
            await self._on_line(Line(by, target, f"\x01{what.upper()} {contents or ''}\x01"))

    async def on_raw_pong(self, message: Any) -> None:
        window, token = self._window, message.params[-1] if message.params else ""
        if window is not None and token == window.token and not window.done.done():
            window.done.set_result(None)

    async def on_raw(self, message: Any) -> None:
        numeric = str(message.command).zfill(3) if isinstance(message.command, int) else str(message.command)
        window, params = self._window, [str(param) for param in message.params]
        if numeric in SEND_ERRORS and window is not None and window.target and about(params, window.target):
            window.errors.append(send_error(numeric, params))
        await super().on_raw(message)

    async def post(self, target: str, lines: Sequence[str]) -> None:
        """Write `lines` to `target` and return once the server has handled them; raise what it refused them with."""
        if not self.connected or not self.ready.is_set():
            raise ChannelUnavailable("not connected to the IRC server")
        await self._acknowledged(target, lines)

    async def _acknowledged(self, target: str, lines: Sequence[str]) -> None:
        """Write the lines and a PING, and wait for its PONG; the numerics in between are the lines' errors."""
        async with self._writing:
            token = f"relaybot-{next(self._tokens)}"
            window = _Window(token, target, asyncio.get_running_loop().create_future())
            self._window = window
            try:
                for line in lines:
                    await self.rawmsg("PRIVMSG", target, line)
                await self.rawmsg("PING", token)
                await asyncio.wait_for(asyncio.shield(window.done), self._ack_timeout)
            except TimeoutError as exc:
                raise DeliveryAmbiguous(f"the IRC server did not answer within {self._ack_timeout:.0f}s") from exc
            except (OSError, asyncio.IncompleteReadError) as exc:
                raise DeliveryAmbiguous(f"IRC connection: {type(exc).__name__}: {exc}") from exc
            finally:
                self._window = None
            if window.errors:
                raise window.errors[0]


def about(params: Sequence[str], target: str) -> bool:
    """Whether a numeric's parameters (the bot's nick first) concern a PRIVMSG to `target`."""
    subject = params[1] if len(params) > 2 else ""
    return subject.lower() in (target.lower(), "privmsg")


def windows(lines: Sequence[str], max_lines: int = WINDOW_LINES, max_bytes: int = WINDOW_BYTES) -> list[list[str]]:
    """`lines` grouped into windows of at most `max_lines` lines and `max_bytes` bytes (a longer line alone)."""
    groups: list[list[str]] = []
    size = 0
    for line in lines:
        length = len(line.encode()) + 2
        if not groups or len(groups[-1]) >= max_lines or size + length > max_bytes:
            groups.append([])
            size = 0
        groups[-1].append(line)
        size += length
    return groups

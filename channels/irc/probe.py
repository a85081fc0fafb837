"""`relaybot doctor` for IRC: TCP (and TLS) to channels.irc's server, then registration under a probe nick."""

from __future__ import annotations

import asyncio
import os
import ssl
from typing import TYPE_CHECKING, cast

from bot.config.channels.base import ChannelSection
from bot.setup.check import Check

if TYPE_CHECKING:
    from bot.config.channels.irc import IrcConfig

_WELCOME = "001"
_REFUSALS = {"432": "the nick is not allowed", "465": "this host is banned", "ERROR": "the server closed the link"}


async def check_irc(name: str, config: ChannelSection, timeout: float, where: str) -> list[Check]:
    """Connect as the bot would and register a throwaway nick (the bot's own may be in use by the running gateway)."""
    return [await _registers(name, cast("IrcConfig", config), timeout, where)]


async def _registers(label: str, section: IrcConfig, timeout: float, where: str) -> Check:
    if not section.server:
        return Check(label, "fail", f"{where}.server is empty", f"set {where}.server to the network's address")
    address = f"{section.server}:{section.port}"
    fix = f"check {where}.server, {where}.port and {where}.tls"
    context = ssl.create_default_context() if section.tls else None
    try:
        async with asyncio.timeout(timeout):
            reader, writer = await asyncio.open_connection(section.server, section.port, ssl=context)
            try:
                nick = f"rbdoc{os.getpid() % 10000}"  # within the 9 characters every server allows (RFC 2812)
                writer.write(f"NICK {nick}\r\nUSER {nick} 0 * :relaybot doctor\r\n".encode())
                await writer.drain()
                answer = await _registration(reader, writer)
                writer.write(b"QUIT :relaybot doctor\r\n")
            finally:
                writer.close()
    except ssl.SSLError as exc:
        return Check(label, "fail", f"TLS with {address} failed ({exc.reason})", f"check {where}.tls and {where}.port")
    except (OSError, TimeoutError) as exc:
        return Check(label, "fail", f"cannot reach {address} ({type(exc).__name__})", fix)
    if answer != _WELCOME:
        return Check(label, "fail", f"{address} refused registration: {_REFUSALS.get(answer, answer)}", fix)
    return Check(label, "ok", f"{address} accepts connections{' over TLS' if section.tls else ''}")


async def _registration(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> str:
    """The server's verdict on registration: 001, a refusal numeric, or ERROR; PINGs before it are answered."""
    while raw := await reader.readline():
        words = raw.decode(errors="replace").split()
        if words[:1] == ["PING"]:
            writer.write(f"PONG {' '.join(words[1:])}\r\n".encode())
            await writer.drain()
            continue
        command = words[1] if words and words[0].startswith(":") and len(words) > 1 else (words[0] if words else "")
        if command == _WELCOME or command in _REFUSALS:
            return command
    return "ERROR"

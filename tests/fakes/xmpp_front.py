"""A stanza-level front between the bot and a real XMPP server: it passes every stanza both ways, records the bot's
messages, and on demand bounces one message itself with a stanza error instead of passing it on, as a loaded or
unwilling server would.

Wire facts (RFC 6120 §4 and §8.3, XEP-0308, XEP-0066, slixmpp's `xmlstream/tostring.py`, Prosody's `util/xml`):
- Each side opens one `<stream:stream>` (again after SASL success, §6.4.6) and then writes stanzas as its
  children: a stanza is a complete top-level element of that stream. Plain c2s (no TLS, as the tests run Prosody)
  is readable on the wire.
- Both slixmpp and Prosody escape `<` and `>` in text and attribute values, so a tag ends at the first `>`.
- A message that cannot be delivered comes back as `<message type='error'>` with the same id, holding
  `<error type='…'>` with one defined condition and an optional `<text>` in `urn:ietf:params:xml:ns:xmpp-stanzas`
  (§8.3.2: type `wait` means retry later, `cancel`/`auth`/`modify` are final).
- The server sends the bound full JID in the bind result (`<jid>…</jid>`, §7.6.1), the address an error goes to.
- A correction carries `<replace id='…' xmlns='urn:xmpp:message-correct:0'/>`; a file link
  `<x xmlns='jabber:x:oob'><url>…</url></x>`.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import xml.etree.ElementTree as ET
from collections import deque
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

from tests.fakes.stream_front import LOOPBACK, StreamFront
from tests.support.polling import until

STANZAS = "urn:ietf:params:xml:ns:xmpp-stanzas"
_BOUND = re.compile(rb"<jid>([^<]+)</jid>")


@dataclass(frozen=True)
class SentMessage:
    """One message with a body that the bot wrote, and whether the front passed it to the server."""

    message_id: str
    to: str
    kind: str
    body: str
    replaces: str
    oob_url: str
    passed: bool


class StanzaSplitter:
    """Cuts one direction of an XMPP stream into whole top-level units: the XML declaration, a stream header, a
    stanza, or the whitespace between (keepalives)."""

    def __init__(self) -> None:
        self._buffer = b""
        self._scan = 0
        self._depth = 0

    def feed(self, data: bytes) -> list[bytes]:
        self._buffer += data
        buffer, units, done = self._buffer, [], 0
        while (lt := buffer.find(b"<", self._scan)) >= 0 and (gt := buffer.find(b">", lt)) >= 0:
            tag, self._scan = buffer[lt : gt + 1], gt + 1
            if self._depth == 0:
                if lt > done:
                    units.append(buffer[done:lt])
                done = lt
                if tag.startswith((b"<?", b"<stream:stream", b"</stream:stream")):
                    units.append(tag)
                    done = gt + 1
                    continue
            if tag.startswith(b"</"):
                self._depth -= 1
            elif not tag.endswith(b"/>"):
                self._depth += 1
            if self._depth == 0:
                units.append(buffer[done : gt + 1])
                done = gt + 1
        if self._depth == 0:
            pending = buffer.find(b"<", done)
            pending = len(buffer) if pending < 0 else pending
            if pending > done:
                units.append(buffer[done:pending])
                done = pending
        self._buffer, self._scan = buffer[done:], max(0, self._scan - done)
        return units


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


def read_message(unit: bytes) -> tuple[str, str, str, str, str, str] | None:
    """(id, to, type, body, replaced id, link) of a message stanza with a body; None for anything else."""
    if not unit.startswith(b"<message"):
        return None
    try:
        element = ET.fromstring(unit)
    except ET.ParseError:
        return None
    children = {_local(child.tag): child for child in element}
    if "body" not in children:
        return None
    replaces = children["replace"].get("id", "") if "replace" in children else ""
    oob = children.get("x")
    url = next((part.text or "" for part in (oob if oob is not None else []) if _local(part.tag) == "url"), "")
    attrs = element.attrib
    body = children["body"].text or ""
    return attrs.get("id", ""), attrs.get("to", ""), attrs.get("type", "normal"), body, replaces, url


class XmppFront(StreamFront):
    """`async with XmppFront(server_port) as front`: the bot connects to `front.port` instead of the server."""

    def __init__(self, server_port: int) -> None:
        super().__init__(server_port)
        self.messages: list[SentMessage] = []
        self._bounces: deque[tuple[str, str, str]] = deque()

    def bounce_next(self, kind: str, condition: str, text: str) -> None:
        """Answer the bot's next message with a stanza error (`kind`: wait, cancel, auth, modify) instead of passing
        it on."""
        self._bounces.append((kind, condition, text))

    def passed(self) -> list[SentMessage]:
        """The messages that reached the server, in order."""
        return [message for message in self.messages if message.passed]

    async def _link(self, bot_reader: asyncio.StreamReader, bot_writer: asyncio.StreamWriter) -> None:
        try:
            server_reader, server_writer = await self._reach_server()
        except OSError:
            bot_writer.close()
            return
        self._writers += [bot_writer, server_writer]
        bound = [""]
        down = asyncio.create_task(self._down(server_reader, bot_writer, bound))
        splitter = StanzaSplitter()
        try:
            while data := await bot_reader.read(65536):
                for unit in splitter.feed(data):
                    if (message := read_message(unit)) is not None and self._bounces:
                        bot_writer.write(self._error(message, bound[0], *self._bounces.popleft()))
                        await self._record(message, passed=False)
                        continue
                    server_writer.write(unit)
                    if message is not None:
                        await self._record(message, passed=True)
                await server_writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            down.cancel()
            for writer in (bot_writer, server_writer):
                writer.close()

    async def _reach_server(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """The server's connection; while it restarts (refusing), the bot's connection waits, as a slow one would."""
        reached: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

        async def connects() -> bool:
            try:
                reached.append(await asyncio.open_connection(LOOPBACK, self.server_port))
            except ConnectionRefusedError:
                return False
            return True

        await until(connects, 10, interval=0.1)
        return reached[0]

    async def _record(self, message: tuple[str, str, str, str, str, str], passed: bool) -> None:
        async with self._changed:
            self.messages.append(SentMessage(*message, passed))
            self._changed.notify_all()

    @staticmethod
    def _error(message: tuple[str, str, str, str, str, str], to: str, kind: str, condition: str, text: str) -> bytes:
        message_id, sender = message[0], message[1]
        return (
            f"<message type='error' id={quoteattr(message_id)} from={quoteattr(sender)} to={quoteattr(to)}>"
            f"<error type='{kind}'><{condition} xmlns='{STANZAS}'/>"
            f"<text xmlns='{STANZAS}'>{escape(text)}</text></error></message>"
        ).encode()

    async def _down(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, bound: list[str]) -> None:
        """Server to bot, whole units only, so an error the front writes never lands inside a server stanza."""
        splitter = StanzaSplitter()
        with contextlib.suppress(ConnectionError, OSError):
            while data := await reader.read(65536):
                for unit in splitter.feed(data):
                    if not bound[0] and (found := _BOUND.search(unit)):
                        bound[0] = found.group(1).decode()
                    writer.write(unit)
                await writer.drain()
        writer.close()

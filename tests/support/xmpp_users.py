"""People on a real XMPP server, for the tests: a slixmpp client per account that keeps every message it receives
(with its id and the id it corrects), writes one-to-one or in a room, and can join rooms."""

from __future__ import annotations

import asyncio
import io
from dataclasses import dataclass
from typing import Any

import slixmpp

from tests.support.polling import until


@dataclass(frozen=True)
class Got:
    """One message as this user's client received it."""

    sender: str  # a bare JID, or room/nick in a room
    body: str
    message_id: str
    replaces: str
    kind: str
    oob_url: str


class XmppUser(slixmpp.ClientXMPP):  # type: ignore[misc]
    """`await XmppUser(jid, password, port).online()` … `user.offline()`."""

    def __init__(self, jid: str, password: str, port: int) -> None:
        super().__init__(jid, password)
        for plugin in ("xep_0030", "xep_0045", "xep_0066", "xep_0184", "xep_0199", "xep_0308", "xep_0363"):
            self.register_plugin(plugin)
        self.enable_plaintext, self.enable_starttls, self.enable_direct_tls = True, False, False
        self.plugin["feature_mechanisms"].unencrypted_plain = True
        self.port = port
        self.received: list[Got] = []
        self.receipts: list[str] = []
        self._started = asyncio.Event()
        self.add_event_handler("session_start", self._session)
        self.add_event_handler("message", self._got)
        self.add_event_handler("receipt_received", lambda msg: self.receipts.append(msg["receipt"]))

    async def online(self) -> XmppUser:
        await self.connect("127.0.0.1", self.port)
        await asyncio.wait_for(self._started.wait(), 15)
        return self

    async def offline(self) -> None:
        await asyncio.wait_for(self.disconnect(), 15)  # the future ends once the stream is closed

    async def join(self, room: str, nick: str) -> None:
        await self.plugin["xep_0045"].join_muc_wait(slixmpp.JID(room), nick, maxstanzas=0)

    def say(self, to: str, body: str, kind: str = "chat") -> str:
        msg = self.make_message(mto=to, mbody=body, mtype=kind)
        msg["id"] = self.new_id()
        msg.send()
        return str(msg["id"])

    async def upload(self, content: bytes, name: str, mime_type: str) -> str:
        """Put a file on the server's HTTP upload service (XEP-0363) and return its download URL."""
        data = io.BytesIO(content)
        upload = self.plugin["xep_0363"].upload_file
        return str(await upload(name, size=len(content), content_type=mime_type, input_file=data, timeout=15))

    def from_(self, sender: str) -> list[Got]:
        """What `sender` (a bare JID, or room/nick) sent this user, in order."""
        return [got for got in self.received if got.sender == sender]

    async def wait_for(self, count: int, sender: str, timeout: float = 15) -> list[Got]:
        await until(lambda: len(self.from_(sender)) >= count, timeout)
        return self.from_(sender)

    def _session(self, event: Any) -> None:
        self.send_presence()
        self._started.set()

    def _got(self, msg: Any) -> None:
        sender = str(msg["from"]) if msg["type"] == "groupchat" else msg["from"].bare
        self.received.append(Got(sender, msg["body"], msg["id"], msg["replace"]["id"], msg["type"], msg["oob"]["url"]))

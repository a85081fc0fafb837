"""The XMPP connection on slixmpp: login, presence, rooms joined; each message sent is confirmed by a ping."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal

import slixmpp
from slixmpp.exceptions import IqError, IqTimeout

from bot.errors import ChannelError, ChannelUnavailable, DeliveryAmbiguous
from channels.xmpp.calls import stanza_error
from channels.xmpp.parse import Stanza

logger = logging.getLogger(__name__)

PLUGINS = ("xep_0030", "xep_0045", "xep_0066", "xep_0184", "xep_0199", "xep_0203", "xep_0308", "xep_0363")
"""Discovery, rooms, links to files, receipts, ping, delayed delivery, corrections, HTTP upload."""
ACK_TIMEOUT = 30.0


class XmppClient(slixmpp.ClientXMPP):
    """One logged-in account; received messages go to `on_stanza`, connection changes to `on_state`."""

    def __init__(
        self,
        jid: str,
        password: str,
        nick: str,
        rooms: Sequence[str],
        on_stanza: Callable[[Stanza], Awaitable[None]],
        on_state: Callable[[bool], None],
        ack_timeout: float = ACK_TIMEOUT,
    ) -> None:
        super().__init__(jid, password)
        for plugin in PLUGINS:
            self.register_plugin(plugin)
        self.plugin["xep_0184"].auto_ack = True  # answer senders' receipt requests
        self.nick = nick
        self._rooms = tuple(rooms)
        self._on_stanza = on_stanza
        self._on_state = on_state
        self._ack_timeout = ack_timeout
        self._bounced: dict[str, ChannelError] = {}
        self._writing = asyncio.Lock()
        self.ready = asyncio.Event()
        self.failure: str | None = None
        self.add_event_handler("session_start", self._started)
        self.add_event_handler("message", self._message)  # one-to-one and room messages with a body
        self.add_event_handler("message_error", self._bounce)
        self.add_event_handler("disconnected", self._disconnected)
        self.add_event_handler("failed_all_auth", self._failed_auth)
        self.add_event_handler("no_auth", self._failed_auth)

    def allow_plain_login(self) -> None:
        """Let SASL send the password without TLS: only for a server on this machine (`tls: off`)."""
        mechanisms = self.plugin["feature_mechanisms"]
        mechanisms.unencrypted_plain = mechanisms.unencrypted_scram = True

    async def _started(self, event: Any) -> None:
        self.send_presence()
        for room in self._rooms:
            await self.plugin["xep_0045"].join_muc_wait(slixmpp.JID(room), self.nick, maxstanzas=0)
        self.ready.set()
        self._on_state(True)

    def _failed_auth(self, event: Any) -> None:
        self.failure = "the server refused the login (check the JID and password)"
        self.ready.set()

    def _disconnected(self, event: Any) -> None:
        self.ready.clear()
        self._on_state(False)

    def _bounce(self, msg: Any) -> None:
        """Kept for the send waiting on that id: handled at once, so before the ping's answer that follows it."""
        error = msg["error"]
        self._bounced[msg["id"]] = stanza_error(error["type"], error["condition"], error["text"])

    async def _message(self, msg: Any) -> None:
        if msg["type"] == "error":
            return
        kind = msg["type"]
        room, nick = (msg["from"].bare, msg["mucnick"]) if kind == "groupchat" else (msg["from"].bare, "")
        real = self.plugin["xep_0045"].get_jid_property(msg["from"].bare, nick, "jid") if nick else None
        stanza = Stanza(
            kind,
            room,
            msg["body"],
            msg["id"] or "",
            nick,
            slixmpp.JID(real).bare if real else "",
            msg["replace"]["id"] or "",
            bool(msg["delay"]["stamp"]),
            msg["oob"]["url"] or "",
        )
        await self._on_stanza(stanza)

    async def send_checked(
        self, to: str, body: str, kind: Literal["chat", "groupchat"], replaces: str = "", url: str = ""
    ) -> str:
        """Send one message and return its id once the server has handled it; raise what it bounced it with."""
        if not self.ready.is_set() or self.failure:
            raise ChannelUnavailable("not connected to the XMPP server")
        async with self._writing:
            msg = self.make_message(mto=to, mbody=body, mtype=kind)
            msg["id"] = self.new_id()
            if replaces:
                msg["replace"]["id"] = replaces
            if url:
                msg["oob"]["url"] = url
            if kind == "chat":
                msg["request_receipt"] = True
            msg.send()
            try:
                await self.plugin["xep_0199"].ping(jid=slixmpp.JID(self.boundjid.domain), timeout=self._ack_timeout)
            except IqTimeout as exc:
                raise DeliveryAmbiguous("the XMPP server did not answer the ping after a message") from exc
            except IqError as exc:
                raise ChannelUnavailable(f"ping refused: {exc.condition}") from exc
            if (bounced := self._bounced.pop(msg["id"], None)) is not None:
                raise bounced
            return str(msg["id"])

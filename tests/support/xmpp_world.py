"""An XMPP world for one test: a fresh Prosody, the bot's account, and the owner online and in the room."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.support.prosody import PASSWORD, ROOMS, ProsodyServer
from tests.support.xmpp_users import XmppUser

ROOM = f"room@{ROOMS}"


class XmppWorld:
    """`async with XmppWorld() as world`: the server, `world.bot` (a JID), `world.owner` (an online user)."""

    def __init__(self, upload: bool = True) -> None:
        self.upload = upload
        self.server: ProsodyServer | None = None
        self.bot = ""
        self.owner: XmppUser | None = None

    async def __aenter__(self) -> XmppWorld:
        self.server = await asyncio.to_thread(ProsodyServer.start, self.upload)
        self.bot = await asyncio.to_thread(self.server.account, "bot")
        owner = await asyncio.to_thread(self.server.account, "owner")
        self.owner = await XmppUser(owner, PASSWORD, self.server.port).online()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self.owner is not None:
            await self.owner.offline()
        if self.server is not None:
            self.server.stop()

    def section(self, **keys: Any) -> dict[str, Any]:
        """channels.xmpp for the bot on this server, in the room, live replies off unless `keys` say otherwise."""
        assert self.server is not None
        return {
            "jid": self.bot,
            "password": PASSWORD,
            "host": "127.0.0.1",
            "port": self.server.port,
            "tls": "off",
            "rooms": [ROOM],
            "streaming": "off",
            **keys,
        }

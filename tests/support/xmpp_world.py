"""An XMPP world for one test: a fresh Prosody, the front the bot connects through, the bot's account, and its
people online (the owner in the room too)."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.fakes.xmpp_front import XmppFront
from tests.support.prosody import PASSWORD, ROOMS, ProsodyServer
from tests.support.xmpp_users import XmppUser

ROOM = f"room@{ROOMS}"


class XmppWorld:
    """`async with XmppWorld() as world`: the server, `world.bot` (a JID), `world.owner` (an online user, in `ROOM`
    as `owner`), `world.stranger` (online, in no room), and `world.front`, which the bot's section points at."""

    def __init__(self, upload: bool = True) -> None:
        self.upload = upload
        self.server: ProsodyServer | None = None
        self.front = XmppFront(0)
        self.bot = ""
        self.owner: XmppUser | None = None
        self.stranger: XmppUser | None = None

    async def __aenter__(self) -> XmppWorld:
        self.server = await asyncio.to_thread(ProsodyServer.start, self.upload)
        self.front.server_port = self.server.port
        await self.front.__aenter__()
        self.bot = await asyncio.to_thread(self.server.account, "bot")
        owner = await asyncio.to_thread(self.server.account, "owner")
        stranger = await asyncio.to_thread(self.server.account, "stranger")
        self.owner = await XmppUser(owner, PASSWORD, self.server.port).online()
        await self.owner.join(ROOM, "owner")
        self.stranger = await XmppUser(stranger, PASSWORD, self.server.port).online()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        for user in (self.owner, self.stranger):
            if user is not None:
                await user.offline()
        await self.front.__aexit__(None, None, None)
        if self.server is not None:
            self.server.stop()

    def section(self, **keys: Any) -> dict[str, Any]:
        """channels.xmpp for the bot on this server, in the room, live replies off unless `keys` say otherwise."""
        assert self.server is not None
        return {
            "jid": self.bot,
            "password": PASSWORD,
            "host": "127.0.0.1",
            "port": self.front.port,
            "tls": "off",
            "rooms": [ROOM],
            "streaming": "off",
            **keys,
        }

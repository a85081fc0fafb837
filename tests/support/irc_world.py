"""An IRC network for one test: a fresh ngircd, the front the bot connects through, and its people (the owner and
a stranger, both in the room), so nicks never clash between tests."""

from __future__ import annotations

import asyncio
from typing import Any

from bot.config.channels.irc import IrcConfig
from tests.fakes.irc_front import IrcFront
from tests.support.irc_users import IrcUser
from tests.support.ngircd import ROOM, SERVER_NAME, NgircdServer

BOT_NICK = "relaybot"
OWNER, STRANGER = "owner", "stranger"


class IrcWorld:
    """`async with IrcWorld() as world`: the server, the front, and its people (`owner` and `stranger`) in the room;
    `penalties` turns on the server's flood throttling."""

    def __init__(self, penalties: bool = False, people: tuple[str, ...] = (OWNER, STRANGER)) -> None:
        self.penalties = penalties
        self.people = people
        self.server: NgircdServer | None = None
        self.front = IrcFront(0, SERVER_NAME)
        self.users: dict[str, IrcUser] = {}
        self._writes: asyncio.Queue[tuple[str, str, str]] = asyncio.Queue()
        self._writer: asyncio.Task[None] | None = None

    async def __aenter__(self) -> IrcWorld:
        self.server = await asyncio.to_thread(NgircdServer.start, self.penalties)
        self.front.server_port = self.server.port
        await self.front.__aenter__()
        for nick in self.people:
            self.users[nick] = await IrcUser(self.server.port, nick, (ROOM,)).__aenter__()
        self._writer = asyncio.create_task(self._write())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._writer is not None:
            self._writer.cancel()
            await asyncio.gather(self._writer, return_exceptions=True)
        for user in self.users.values():
            await user.__aexit__(None, None, None)
        await self.front.__aexit__(None, None, None)
        if self.server is not None:
            self.server.stop()

    def section(self, **keys: Any) -> dict[str, Any]:
        """channels.irc for the bot, through the front, in the room."""
        return {
            "server": "127.0.0.1",
            "port": self.front.port,
            "tls": False,
            "nick": BOT_NICK,
            "channels": [ROOM],
            **keys,
        }

    def config(self, **keys: Any) -> IrcConfig:
        """The section as the channel takes it."""
        return IrcConfig.model_validate({"enabled": True, **self.section(**keys)})

    def say(self, user: str, target: str, text: str) -> None:
        """`user` writes `text` to `target`, after everything written before (one writer keeps the order)."""
        self._writes.put_nowait((user, target, text))

    async def _write(self) -> None:
        while True:
            user, target, text = await self._writes.get()
            await self.users[user].say(target, text)

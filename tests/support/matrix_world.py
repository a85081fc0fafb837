"""One test's Matrix: a fresh bot account on the session's Synapse behind a recording front, the owner and a
stranger as real users, a group room, and the users' actions run in order on a task of their own."""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote

from aiohttp import ClientSession

from tests.fakes.matrix_front import MatrixFront
from tests.support.polling import until
from tests.support.synapse import MatrixUser, Synapse

logger = logging.getLogger(__name__)

JOIN_TIMEOUT = 20.0
_txns = itertools.count(1)


class UserClient:
    """A person's Matrix client, speaking the client-server API to Synapse directly."""

    def __init__(self, http: ClientSession, base: str, user: MatrixUser) -> None:
        self._http = http
        self._base = base
        self.user = user

    async def call(self, method: str, path: str, body: Any = None, **extra: Any) -> dict[str, Any]:
        """One authenticated call; raises on any status but 200."""
        headers = {"Authorization": f"Bearer {self.user.access_token}", **extra.pop("headers", {})}
        data = extra.pop("data", None)
        async with self._http.request(
            method, self._base + path, json=body if data is None else None, data=data, headers=headers, **extra
        ) as reply:
            answer: dict[str, Any] = await reply.json(content_type=None)
            if reply.status != 200:
                raise RuntimeError(f"{method} {path}: {reply.status} {answer}")
            return answer

    async def create_room(self, invite: list[str], direct: bool) -> str:
        preset = "trusted_private_chat" if direct else "private_chat"
        body = {"invite": invite, "is_direct": direct, "preset": preset}
        return str((await self.call("POST", "/_matrix/client/v3/createRoom", body))["room_id"])

    async def join(self, room_id: str) -> None:
        await self.call("POST", f"/_matrix/client/v3/join/{quote(room_id)}", {})

    async def invite(self, room_id: str, user_id: str) -> None:
        await self.call("POST", f"/_matrix/client/v3/rooms/{quote(room_id)}/invite", {"user_id": user_id})

    async def send(self, room_id: str, content: dict[str, Any], kind: str = "m.room.message") -> str:
        path = f"/_matrix/client/v3/rooms/{quote(room_id)}/send/{kind}/t{next(_txns)}-{time.monotonic_ns()}"
        return str((await self.call("PUT", path, content))["event_id"])

    async def upload(self, content: bytes, name: str, mime_type: str) -> str:
        path = f"/_matrix/media/v3/upload?filename={quote(name)}"
        answer = await self.call("POST", path, data=content, headers={"Content-Type": mime_type})
        return str(answer["content_uri"])

    async def membership(self, room_id: str, user_id: str) -> str | None:
        """`user_id`'s membership of the room as this user sees it (None: never a member)."""
        path = f"/_matrix/client/v3/rooms/{quote(room_id)}/state/m.room.member/{quote(user_id)}"
        try:
            return str((await self.call("GET", path))["membership"])
        except RuntimeError:
            return None

    async def wait_membership(self, room_id: str, user_id: str, wanted: set[str]) -> str:
        """Poll (every 50 ms, a real server has no push to a test) until `user_id`'s membership is in `wanted`."""

        async def arrived() -> bool:
            return await self.membership(room_id, user_id) in wanted

        try:
            await until(arrived, JOIN_TIMEOUT, interval=0.05)
        except TimeoutError:
            state = await self.membership(room_id, user_id)
            raise TimeoutError(f"{user_id} in {room_id} stayed {state}, not {wanted}") from None
        return str(await self.membership(room_id, user_id))


class MatrixWorld:
    """`async with MatrixWorld(synapse, (owner, stranger))`: everything one test's Matrix needs, torn down after."""

    fixtures = ("synapse", "matrix_people")  # the session's Synapse and people, for the contract suite

    def __init__(self, synapse: Synapse, people: tuple[MatrixUser, MatrixUser]) -> None:
        owner, stranger = people
        self.synapse = synapse
        self.bot = synapse.register("bot")
        self.front = MatrixFront(synapse.url)
        self._people = {owner.user_id: owner, stranger.user_id: stranger}
        self._http: ClientSession | None = None
        self._clients: dict[str, UserClient] = {}
        self.direct_rooms: dict[str, str] = {}
        self.group_id = ""
        self._actions: asyncio.Queue[tuple[Callable[[], Awaitable[Any]], asyncio.Future[Any]]] = asyncio.Queue()
        self._runner: asyncio.Task[None] | None = None
        self.failures: list[BaseException] = []

    async def __aenter__(self) -> MatrixWorld:
        await self.front.__aenter__()
        self._http = ClientSession()
        self._clients = {uid: UserClient(self._http, self.synapse.url, u) for uid, u in self._people.items()}
        owner, stranger = self._clients.values()
        self.group_id = await owner.create_room([self.bot.user_id, stranger.user.user_id], direct=False)
        await stranger.join(self.group_id)
        self._runner = asyncio.create_task(self._run())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._runner is not None:
            self._runner.cancel()
            await asyncio.gather(self._runner, return_exceptions=True)
        if self._http is not None:
            await self._http.close()
        await self.front.__aexit__(*exc_info)

    def client(self, user_id: str) -> UserClient:
        """The client of the owner or the stranger."""
        return self._clients[user_id]

    def later(self, action: Callable[[], Awaitable[Any]]) -> asyncio.Future[Any]:
        """Run `action` after every action queued before it; its result (an event id) arrives in the future."""
        done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._actions.put_nowait((action, done))
        return done

    async def in_group(self, user_id: str) -> str:
        """The group room, once the bot has joined it."""
        await self.client(user_id).wait_membership(self.group_id, self.bot.user_id, {"join"})
        return self.group_id

    async def direct_room(self, user_id: str) -> str | None:
        """`user_id`'s DM room with the bot, inviting it again after a decline; None when the bot declines."""
        client = self.client(user_id)
        room = self.direct_rooms.get(user_id)
        if room is None:
            room = self.direct_rooms[user_id] = await client.create_room([self.bot.user_id], direct=True)
        elif await client.membership(room, self.bot.user_id) == "join":
            return room
        else:
            await client.invite(room, self.bot.user_id)
        state = await client.wait_membership(room, self.bot.user_id, {"join", "leave"})
        return room if state == "join" else None

    async def _run(self) -> None:
        while True:
            action, done = await self._actions.get()
            try:
                done.set_result(await action())
            except Exception as exc:
                logger.exception("matrix test action failed")
                self.failures.append(exc)
                done.set_exception(exc)
                done.exception()  # retrieved: the failure is reported through `failures`

"""Matrix as the contract suite sees it: real users on a real Synapse, the bot's calls seen by the front."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bot.bus import ChatRef
from bot.config.channels.matrix import MatrixConfig
from channels.base import Channel
from channels.matrix.channel import MatrixChannel
from tests.support.adapter import AdapterUnderTest
from tests.support.matrix_world import MatrixWorld
from tests.support.platform import Platform

Sleep = Callable[[float], Awaitable[None]]
_NUMBERED = re.compile(r"^(\d+)\. (.+)$", re.MULTILINE)


def matrix_section(world: MatrixWorld, **section: Any) -> dict[str, Any]:
    """channels.matrix for the world's bot behind its front; replies go out whole unless `section` says otherwise."""
    return {
        "homeserver": world.front.url,
        "user_id": world.bot.user_id,
        "access_token": world.bot.access_token,
        "streaming": "off",
        **section,
    }


def matrix_adapter(
    world: MatrixWorld, media_dir: Path, sleep: Sleep = asyncio.sleep, **section: Any
) -> AdapterUnderTest[MatrixChannel]:
    """The Matrix channel alone (the owner on its allowlist, so it joins the owner's rooms) against the world."""
    keys = {"enabled": True, "allow_from": [Matrix.owner], **matrix_section(world, **section)}
    config = MatrixConfig.model_validate(keys)
    state = media_dir.parent / "matrix-state" / "sync.json"
    return AdapterUnderTest(lambda publish: MatrixChannel(publish, config, media_dir, state, sleep=sleep))


class Matrix(Platform):
    name, limit, owner, stranger = "matrix", 6000, "@owner:localhost", "@stranger:localhost"
    forbidden = "M_FORBIDDEN"
    stream_chunk_delay = 0.15  # a send through Synapse takes up to a second on a loaded machine
    fake: MatrixWorld

    @property
    def section(self) -> dict[str, Any]:
        return matrix_section(self.fake)

    @property
    def server(self) -> str:
        return self.fake.group_id

    @property
    def group_chat(self) -> ChatRef:
        return ChatRef("matrix", self.fake.group_id)

    def adapter(self, media_dir: Path, **section: Any) -> AdapterUnderTest[Channel]:
        return matrix_adapter(self.fake, media_dir, **section)  # type: ignore[return-value]

    def dm(self, text: str, user: str) -> Any:
        return self._write(user, None, {"msgtype": "m.text", "body": text})

    def group(self, text: str, user: str, mention: bool) -> Any:
        body = f"{self.fake.bot.user_id}: {text}" if mention else text
        content: dict[str, Any] = {"msgtype": "m.text", "body": body}
        if mention:
            content["m.mentions"] = {"user_ids": [self.fake.bot.user_id]}
        return self._write(user, self.fake.group_id, content)

    def dm_file(self, content: bytes, name: str, mime_type: str, user: str) -> Any:
        async def send() -> str | None:
            room = await self.fake.direct_room(user)
            if room is None:
                return None
            client = self.fake.client(user)
            url = await client.upload(content, name, mime_type)
            info = {"mimetype": mime_type, "size": len(content)}
            return await client.send(room, {"msgtype": "m.file", "body": name, "url": url, "info": info})

        return self.fake.later(send)

    def _write(self, user: str, room_id: str | None, content: dict[str, Any]) -> Any:
        async def send() -> str | None:
            room = await (self.fake.in_group(user) if room_id else self.fake.direct_room(user))
            return None if room is None else await self.fake.client(user).send(room, content)

        return self.fake.later(send)

    def redeliver(self, payload: Any) -> None:
        async def again() -> None:
            self.fake.front.deliver_again(await payload)

        self.fake.later(again)

    def sent(self) -> list[str]:
        return [str(posted.content.get("body", "")) for posted in self.fake.front.posted]

    async def wait_sent(self, n: int) -> None:
        await self.wait_for(lambda: len(self.fake.front.posted) >= n, f"{n} messages sent")

    def sent_ids(self) -> list[str]:
        return [posted.event_id for posted in self.fake.front.posted]

    def edits(self) -> list[tuple[str, str]]:
        return list(self.fake.front.edits)

    def uploads(self) -> list[str]:
        return list(self.fake.front.uploads)

    def buttons(self, index: int) -> list[str]:
        return [label for _, label in _NUMBERED.findall(self.sent()[index])]

    def press(self, index: int, prompt_id: str, choice_id: str, label: str, user: str) -> None:
        number = self.buttons(index).index(label) + 1
        room = self.fake.front.posted[index].room_id
        self._write(user, room if room == self.fake.group_id else None, {"msgtype": "m.text", "body": str(number)})

    def marks(self) -> list[str]:
        return [key for _, key in self.fake.front.reactions.values()]

    def limit_send(self, retry_after: float) -> None:
        self.fake.front.fail_send(429, "M_LIMIT_EXCEEDED", "Too Many Requests", round(retry_after * 1000))

    def break_send(self) -> None:
        self.fake.front.fail_send(503, "M_UNKNOWN", "Service Unavailable")

    def refuse_send(self) -> None:
        self.fake.front.fail_send(403, self.forbidden, "You are not allowed to send messages in this room")

    def send_attempts(self) -> int:
        return self.fake.front.send_attempts()

    async def wait_for(self, check: Callable[[], bool], what: str) -> None:
        if self.fake.failures:
            raise self.fake.failures[0]
        await self.fake.front.wait_until(check, what)

"""The faces of the apps on servers their users run, Mattermost and Signal (signal-cli), and their adapters."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bot.bus import ChatRef
from bot.config.channels.mattermost import MattermostConfig
from bot.config.channels.signal import SignalConfig
from channels.base import Channel, Publish
from channels.catchup import RecentChats
from channels.mattermost.channel import MattermostChannel
from channels.mattermost.send import MAX_MESSAGE_LENGTH as MATTERMOST_LIMIT
from channels.signal.channel import SignalChannel
from channels.signal.send import MAX_MESSAGE_LENGTH as SIGNAL_LIMIT
from tests.fakes.loopback import LoopbackSite
from tests.fakes.mattermost_payloads import mm_error, rate_limited
from tests.fakes.mattermost_server import FakeMattermost
from tests.fakes.signal_daemon import FakeSignalDaemon, rpc_error
from tests.support.adapter import AdapterUnderTest
from tests.support.platform import Platform


class _SelfHosted(Platform):
    """What Mattermost's and signal-cli's fakes answer alike: a DM, a file in a DM, a redelivery, the texts sent."""

    def dm(self, text: str, user: str) -> Any:
        return self.fake.dm(text, user)

    def dm_file(self, content: bytes, name: str, mime_type: str, user: str) -> Any:
        return self.fake.dm_file(content, name, mime_type, user)

    def redeliver(self, payload: Any) -> None:
        self.fake.push(payload)

    def sent(self) -> list[str]:
        return self.fake.sent_texts()

    async def wait_sent(self, n: int) -> None:
        await self.fake.wait_for_sent(n)

    def send_attempts(self) -> int:
        return self.fake.attempts

    async def wait_for(self, check: Callable[[], bool], what: str) -> None:
        await self.fake.wait_until(check, what)


class MattermostAdapter(AdapterUnderTest[MattermostChannel]):
    """The Mattermost channel with its callbacks served on 127.0.0.1, as the gateway's HTTP server serves them;
    the channel is made once the server's URL (its `callback_url`) is known."""

    def __init__(
        self, fake: FakeMattermost, media_dir: Path, section: dict[str, Any], chats: RecentChats | None = None
    ) -> None:
        self._fake, self._media_dir, self._section, self._chats = fake, media_dir, section, chats
        self._site: LoopbackSite | None = None
        super().__init__(self._unmade)

    def _unmade(self, publish: Publish) -> MattermostChannel:
        self._publish = publish
        return None  # type: ignore[return-value]  # made in __aenter__, once the callback URL is known

    async def __aenter__(self) -> MattermostAdapter:
        from aiohttp import web

        app = web.Application()
        self._site = LoopbackSite(app)
        callback = f"http://127.0.0.1:{await self._site_port(app)}"
        options = {key: self._section.pop(key) for key in ("reconnect_delay",) if key in self._section}
        section = {"enabled": True, **mattermost_section(self._fake), "callback_url": callback, **self._section}
        config = MattermostConfig.model_validate(section)
        self.channel = MattermostChannel(self._publish, config, self._media_dir, **options)
        if self._chats is not None:
            self.channel.remember_chats(self._chats)
        try:
            await self.channel.start()
        except BaseException:
            await self._site.stop()
            raise
        return self

    async def _site_port(self, app: Any) -> int:
        app.router.add_post("/mattermost/{what}", self._route)
        assert self._site is not None
        return await self._site.start()

    async def _route(self, request: Any) -> Any:
        """Hand each callback to the channel's own route of that path."""
        for route in self.channel.webhook_routes():
            if route.path == request.path:  # type: ignore[attr-defined]
                return await route.handler(request)  # type: ignore[attr-defined]
        raise LookupError(request.path)

    async def __aexit__(self, *exc_info: object) -> None:
        await self.channel.stop()
        if self._site is not None:
            await self._site.stop()


def mattermost_section(fake: FakeMattermost) -> dict[str, Any]:
    """The `channels.mattermost` keys that point the channel at `fake` (live replies off)."""
    return {"url": fake.url, "token": fake.token, "streaming": "off"}


class Mattermost(_SelfHosted):
    """Mattermost's town square is the group; a 429 names its wait in Retry-After."""

    name, limit, owner, stranger = (
        "mattermost",
        MATTERMOST_LIMIT,
        "ownerowner0000000000000000",
        "strangerstranger0000000000",
    )
    forbidden = "You do not have the appropriate permissions."
    fake: FakeMattermost

    @property
    def section(self) -> dict[str, Any]:
        return mattermost_section(self.fake)

    @property
    def server(self) -> str:
        return self.fake.team_id

    @property
    def group_chat(self) -> ChatRef:
        return ChatRef("mattermost", self.fake.town_square)

    def adapter(self, media_dir: Path, **section: Any) -> AdapterUnderTest[Channel]:
        return MattermostAdapter(self.fake, media_dir, section)  # type: ignore[return-value]

    def group(self, text: str, user: str, mention: bool) -> Any:
        return self.fake.channel_message(text, user, mention)

    def sent_ids(self) -> list[str]:
        return [post["id"] for post in self.fake.sent]

    def edits(self) -> list[tuple[str, str]]:
        return list(self.fake.edits)

    def uploads(self) -> list[str]:
        return [self.fake.uploads[file_id][1] for post in self.fake.sent for file_id in post["file_ids"]]

    def buttons(self, index: int) -> list[str]:
        attachments = self.fake.posts[self.fake.sent[index]["id"]]["props"]["attachments"]
        return [action["name"] for attachment in attachments for action in attachment["actions"]]

    def press(self, index: int, prompt_id: str, choice_id: str, label: str, user: str) -> None:
        import asyncio

        sent = self.fake.posts[self.fake.sent[index]["id"]]
        asyncio.get_running_loop().create_task(self.fake.press(sent, label, user))

    def marks(self) -> list[str]:
        latest: dict[tuple[str, str], bool] = {}
        for post_id, emoji, added in self.fake.reactions:
            latest[(post_id, emoji)] = added
        return [emoji for (_, emoji), added in latest.items() if added]

    def limit_send(self, retry_after: float) -> None:
        self.fake.failures.append(rate_limited(int(retry_after)))

    def break_send(self) -> None:
        self.fake.failures.append(mm_error(503, "api.server.unavailable", "Service Unavailable"))

    def refuse_send(self) -> None:
        self.fake.failures.append(mm_error(403, "api.context.permissions.app_error", self.forbidden))


def posted_post(event: dict[str, Any]) -> dict[str, Any]:
    """The post a `posted` event carries."""
    return dict(json.loads(event["data"]["post"]))


_NUMBERED = re.compile(r"^(\d+)\. (.+)$", re.MULTILINE)


def signal_section(fake: FakeSignalDaemon) -> dict[str, Any]:
    """The `channels.signal` keys that point the channel at `fake`."""
    return {"url": fake.url, "account": fake.account, "streaming": "off"}


def signal_adapter(fake: FakeSignalDaemon, media_dir: Path, **section: Any) -> AdapterUnderTest[SignalChannel]:
    """The Signal channel against `fake`; `reconnect_delay` goes to the channel, the rest into its section."""
    options = {key: section.pop(key) for key in ("reconnect_delay",) if key in section}
    config = SignalConfig.model_validate({"enabled": True, **signal_section(fake), **section})
    return AdapterUnderTest(lambda publish: SignalChannel(publish, config, media_dir, **options))


class Signal(_SelfHosted):
    """Signal through signal-cli: a group, no edits (a live reply goes out whole), choices as numbered lines
    pressed by typing the number, and a rate limit that names its wait."""

    name, limit, owner, stranger = "signal", SIGNAL_LIMIT, "+4915100000042", "+4915100000077"
    forbidden = "Failed to send message"
    can_edit = False
    fake: FakeSignalDaemon

    @property
    def section(self) -> dict[str, Any]:
        return signal_section(self.fake)

    @property
    def server(self) -> str:
        return self.fake.group_id

    @property
    def group_chat(self) -> ChatRef:
        return ChatRef("signal", self.fake.group_id)

    def adapter(self, media_dir: Path, **section: Any) -> AdapterUnderTest[Channel]:
        return signal_adapter(self.fake, media_dir, **section)  # type: ignore[return-value]

    def group(self, text: str, user: str, mention: bool) -> Any:
        return self.fake.group_message(text, user, mention)

    def sent_ids(self) -> list[str]:
        return [f"{self.fake.account}:{sent['timestamp']}" for sent in self.fake.sent]

    def edits(self) -> list[tuple[str, str]]:
        return []

    def uploads(self) -> list[str]:
        names = []
        for sent in self.fake.sent:
            for attachment in sent.get("attachments") or []:
                header = str(attachment).partition(",")[0]
                names += [part[9:] for part in header.split(";") if part.startswith("filename=")]
        return names

    def buttons(self, index: int) -> list[str]:
        return [label for _, label in _NUMBERED.findall(self.fake.sent_texts()[index])]

    def press(self, index: int, prompt_id: str, choice_id: str, label: str, user: str) -> None:
        number = self.buttons(index).index(label) + 1
        sent = self.fake.sent[index]
        if sent.get("groupId"):
            self.fake.group_message(str(number), user, mention=False)
        else:
            self.fake.dm(str(number), user)

    def marks(self) -> list[str]:
        latest = {(r["targetAuthor"], r["targetTimestamp"]): r["emoji"] for r in self.fake.reactions}
        return list(latest.values())

    def limit_send(self, retry_after: float) -> None:
        message = "Failed to send message due to rate limiting"
        self.fake.failures.append(rpc_error(-5, message, ["RATE_LIMIT_FAILURE"], int(retry_after)))

    def break_send(self) -> None:
        self.fake.failures.append(rpc_error(-1, "Failed to send message", ["NETWORK_FAILURE"]))

    def refuse_send(self) -> None:
        self.fake.failures.append(rpc_error(-1, self.forbidden, ["UNREGISTERED_FAILURE"]))

"""One adapter under test for every platform: a started channel alone against its fake, what it published in order."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from bot.bus import InboundMessage
from bot.config.channels.discord import DiscordConfig
from bot.config.channels.slack import SlackConfig
from bot.config.channels.telegram import TelegramConfig
from channels.base import Channel, Publish
from channels.catchup import RecentChats
from channels.discord.channel import DiscordChannel
from channels.slack.channel import SlackChannel
from channels.telegram.channel import TelegramChannel
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.loopback import LoopbackSite
from tests.fakes.slack_server import FakeSlack
from tests.fakes.telegram_server import FakeTelegram
from tests.support.gateway import slack_section
from tests.support.publishing import Published

C = TypeVar("C", bound=Channel)


class AdapterUnderTest(Generic[C]):
    """`async with AdapterUnderTest(make) as bot`: `make(publish)` builds the channel, started on entry and stopped
    on exit; `await bot.next()` reads what it published, in order."""

    def __init__(self, make: Callable[[Publish], C]) -> None:
        self.published = Published()
        self.channel = make(self.published)
        self._read = 0

    async def __aenter__(self) -> AdapterUnderTest[C]:
        await self.channel.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.channel.stop()

    async def next(self, timeout: float = 5) -> InboundMessage:
        """The next message the channel published, once it has."""
        message = (await self.published.wait_for(self._read + 1, timeout))[self._read]
        self._read += 1
        return message

    def nothing_more(self) -> bool:
        """Whether the channel published nothing beyond what `next` returned."""
        return len(self.published.messages) == self._read


class PostsToWebhook(Protocol):
    """A fake platform that delivers by POSTing to the bot's webhook at `webhook_url`."""

    webhook_url: str


class WebhookAdapter(AdapterUnderTest[C]):
    """The channel with its webhook served on 127.0.0.1 at `path`, as the gateway's HTTP server serves it; `fake`
    posts there."""

    def __init__(self, make: Callable[[Publish], C], fake: PostsToWebhook, path: str) -> None:
        super().__init__(make)
        self._fake, self._path = fake, path
        self._site: LoopbackSite | None = None

    async def __aenter__(self) -> WebhookAdapter[C]:
        from aiohttp import web

        app = web.Application()
        app.router.add_routes(self.channel.webhook_routes())  # type: ignore[attr-defined]
        self._site = LoopbackSite(app)
        self._fake.webhook_url = f"http://127.0.0.1:{await self._site.start()}{self._path}"
        await self.channel.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.channel.stop()
        if self._site is not None:
            await self._site.stop()


def telegram_adapter(fake: FakeTelegram, media_dir: Path, **section: Any) -> AdapterUnderTest[TelegramChannel]:
    """The Telegram channel against `fake`; `section` sets keys of channels.telegram."""
    config = TelegramConfig(enabled=True, token=fake.token, api_base=fake.base_url, **section)
    return AdapterUnderTest(lambda publish: TelegramChannel(publish, config, media_dir))


def discord_adapter(fake: FakeDiscord, media_dir: Path, **section: Any) -> AdapterUnderTest[DiscordChannel]:
    """The Discord channel against `fake`; `section` sets keys of channels.discord."""
    config = DiscordConfig(token=fake.token, api_base=fake.api_base, gateway_url=fake.gateway_url, **section)
    return AdapterUnderTest(lambda publish: DiscordChannel(publish, config, media_dir))


def slack_adapter(
    fake: FakeSlack, media_dir: Path, chats: RecentChats | None = None, **section: Any
) -> AdapterUnderTest[SlackChannel]:
    """The Slack channel against `fake` (live replies off unless `section` turns them on), noting chats in `chats`."""
    config = SlackConfig.model_validate(slack_section(fake, **section))

    def make(publish: Publish) -> SlackChannel:
        channel = SlackChannel(publish, config, media_dir)
        if chats is not None:
            channel.remember_chats(chats)
        return channel

    return AdapterUnderTest(make)

"""Gateways with one platform enabled, against its fake server and the fake LLM: the test backend for chat flows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fakes.discord_server import FakeDiscord
from tests.fakes.openai_server import FakeLLM
from tests.fakes.slack_server import FakeSlack
from tests.fakes.telegram_server import FakeTelegram
from tests.support.harness import GatewayUnderTest

OWNER = 42
SLACK_OWNER = "U0OWNER"


class TelegramBot(GatewayUnderTest):
    """`relaybot run` with Telegram enabled; user 42 is the owner."""

    def __init__(
        self,
        tmp_path: Path,
        fake_llm: FakeLLM,
        telegram: FakeTelegram,
        telegram_options: dict[str, object] | None = None,
        **overrides: object,
    ) -> None:
        section = {"enabled": True, "token": telegram.token, "api_base": telegram.base_url, **(telegram_options or {})}
        super().__init__(tmp_path, fake_llm, [f"telegram:{OWNER}"], {"telegram": section}, **overrides)


class DiscordBot(GatewayUnderTest):
    """`relaybot run` with Discord enabled; user 42 is the owner."""

    def __init__(
        self,
        tmp_path: Path,
        fake_llm: FakeLLM,
        discord: FakeDiscord,
        discord_options: dict[str, object] | None = None,
        **overrides: object,
    ) -> None:
        section = {"enabled": True, "token": discord.token, **(discord_options or {})}
        section.update(api_base=discord.api_base, gateway_url=discord.gateway_url)
        super().__init__(tmp_path, fake_llm, [f"discord:{OWNER}"], {"discord": section}, **overrides)


def slack_section(slack: FakeSlack, **overrides: Any) -> dict[str, Any]:
    """The Slack section for `slack`, live replies off unless `overrides` turn them on."""
    return {
        "enabled": True,
        "bot_token": slack.bot_token,
        "app_token": slack.app_token,
        "api_base": slack.base_url,
        "streaming": "off",
        **overrides,
    }


class SlackBot(GatewayUnderTest):
    """`relaybot run` with Slack enabled and connected on entry; U0OWNER is the owner."""

    def __init__(
        self,
        tmp_path: Path,
        fake_llm: FakeLLM,
        slack: FakeSlack,
        overrides: dict[str, Any] | None = None,
        **section: Any,
    ) -> None:
        """`section` sets keys of channels.slack; `overrides` other top-level sections, e.g. {"tools": {…}}."""
        channels = {"slack": slack_section(slack, **section)}
        super().__init__(tmp_path, fake_llm, [f"slack:{SLACK_OWNER}"], channels, **(overrides or {}))

    async def __aenter__(self) -> SlackBot:
        await super().__aenter__()
        await self.gateway.manager.ready("slack")
        return self

"""A gateway with Telegram enabled, against the fake Bot API and the fake LLM: the test backend for chat flows."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.openai_server import FakeLLM
from tests.fakes.telegram_server import FakeTelegram
from tests.harness import GatewayUnderTest

OWNER = 42


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

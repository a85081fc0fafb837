"""A gateway with Telegram enabled, against the fake Bot API and the fake LLM: the test backend for chat flows."""

from __future__ import annotations

from pathlib import Path

from bot.app import Gateway
from bot.llm import LiteLLMProvider
from bot.retry import RetryPolicy
from tests.fakes.openai_server import FakeLLM
from tests.fakes.telegram_server import FakeTelegram
from tests.harness import make_config

OWNER = 42


class RecordedSleep:
    """An injected sleep: records the wait and returns at once."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


class TelegramBot:
    """A gateway with Telegram enabled, against the fake Bot API and the fake LLM."""

    def __init__(
        self,
        tmp_path: Path,
        fake_llm: FakeLLM,
        telegram: FakeTelegram,
        telegram_options: dict[str, object] | None = None,
        **overrides: object,
    ) -> None:
        section = {"enabled": True, "token": telegram.token, "api_base": telegram.base_url, **(telegram_options or {})}
        self.config = make_config(
            tmp_path, fake_llm, owners=[f"telegram:{OWNER}"], channels={"telegram": section}, **overrides
        )
        self.sleep = RecordedSleep()
        provider = LiteLLMProvider(self.config.llm, RetryPolicy(base_delay=0.0))
        self.gateway = Gateway(
            self.config,
            provider,
            channel_retry=RetryPolicy(sleep=self.sleep),
            start_retry=RetryPolicy(base_delay=0.05, max_delay=0.2),
        )

    async def __aenter__(self) -> TelegramBot:
        await self.gateway.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.gateway.stop()

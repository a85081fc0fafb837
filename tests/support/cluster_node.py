"""One process of a redis cluster in tests: a Gateway on the fake Telegram and model, with its own state_dir."""

from __future__ import annotations

from pathlib import Path

from bot.app.gateway import Gateway
from bot.cluster.roles import Role
from bot.llm.provider import ModelProvider
from bot.retry import RetryPolicy
from tests.fakes.openai_server import FakeLLM
from tests.fakes.telegram_server import FakeTelegram
from tests.support.harness import make_config

OWNER = 42


def cluster_node(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, url: str, role: Role, prefix: str = "relaybot"
) -> Gateway:
    """A process in `role` whose state lives under `tmp_path`, as on a machine of its own."""
    config = make_config(
        tmp_path,
        fake_llm,
        owners=[f"telegram:{OWNER}"],
        channels={"telegram": {"enabled": True, "token": telegram.token, "api_base": telegram.base_url}},
        bus={"backend": "redis", "url": url, "prefix": prefix},
    )
    provider = ModelProvider(config.llm, RetryPolicy(base_delay=0.0))
    return Gateway(config, provider, start_retry=RetryPolicy(base_delay=0.05, max_delay=0.2), role=role)

"""Dead letters on the redis deployment: a worker's failed message reaches the owner's notice through the gateway,
and `relaybot queue` lists and retries it whether the gateway and the worker run or not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from bot.app.gateway import Gateway
from bot.llm.provider import ModelProvider
from bot.retry import RetryPolicy
from tests.e2e.test_dead_letters import cli, letters
from tests.fakes.openai_server import Error, FakeLLM
from tests.fakes.telegram_server import FakeTelegram
from tests.support.harness import make_config

OWNER = 42
REFUSED = Error(401, "Incorrect API key provided")
REASON = "its turn failed: the model call failed (ProviderAuthError)"


class Cluster:
    """A gateway holding the Telegram bot and a worker running the turns, on one Redis."""

    def __init__(self, home: Path, fake_llm: FakeLLM, telegram: FakeTelegram, redis_url: str) -> None:
        section = {"telegram": {"enabled": True, "token": telegram.token, "api_base": telegram.base_url}}
        self.bus = {"backend": "redis", "url": redis_url}
        self.owners = [f"telegram:{OWNER}"]
        self.roles = {"gateway": section, "worker": {}}
        self.home, self.fake_llm = home, fake_llm
        self.nodes: list[Gateway] = []

    def config_file(self) -> Path:
        """The gateway's config, as `relaybot queue` reads it."""
        path = self.home / "gateway" / "config.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        data: dict[str, Any] = {
            "workspace": str(self.home / "gateway" / "workspace"),
            "state_dir": str(self.home / "gateway" / "state"),
            "owners": self.owners,
            "bus": self.bus,
        }
        path.write_text(yaml.safe_dump(data))
        return path

    async def start(self) -> None:
        for role, channels in self.roles.items():
            config = make_config(self.home / role, self.fake_llm, owners=self.owners, channels=channels, bus=self.bus)
            provider = ModelProvider(config.llm, RetryPolicy(base_delay=0.0))
            node = Gateway(config, provider, role=role)
            await node.start()
            self.nodes.append(node)
        await self.nodes[0].manager.ready("telegram")

    async def stop(self) -> None:
        for node in reversed(self.nodes):
            await node.stop()
        self.nodes = []


async def test_a_workers_failed_message_is_listed_and_retried_by_the_cli_with_the_cluster_running_or_not(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, redis_url: str
) -> None:
    cluster = Cluster(tmp_path, fake_llm, telegram, redis_url)
    config = cluster.config_file()
    await cluster.start()
    try:
        fake_llm.script(REFUSED)
        telegram.text("first question", chat_id=OWNER, user_id=OWNER)
        first = sorted(sent["text"] for sent in await telegram.wait_for_sent(2))
        # the worker's failure reaches the gateway's notice (the sender is the owner: both in one chat)
        assert first[0].startswith("1 message could not be answered") and first[1].startswith("Sorry")
        [letter] = await letters(config)
        assert (letter["direction"], letter["reason"], letter["preview"]) == ("in", REASON, "first question")
        assert await cli(config, "queue", "retry", letter["id"]) == (0, "Retried 1 dead letter (now).\n")
        answer = (await telegram.wait_for_sent(3))[2]
        assert answer["text"].startswith("echo: ") and "first question" in answer["text"]
        assert await letters(config) == []

        fake_llm.script(REFUSED)
        telegram.text("second question", chat_id=OWNER, user_id=OWNER)
        assert (await telegram.wait_for_sent(4))[3]["text"].startswith("Sorry")
    finally:
        await cluster.stop()

    [letter] = await letters(config)  # nothing runs: read from Redis
    assert (letter["reason"], letter["preview"]) == (REASON, "second question")
    assert await cli(config, "queue", "retry", "--all") == (0, "Retried 1 dead letter (now).\n")
    await cluster.start()
    try:
        answer = (await telegram.wait_for_sent(5))[4]
        assert answer["text"].startswith("echo: ") and "second question" in answer["text"]
        assert await letters(config) == []
    finally:
        await cluster.stop()
    assert sum(sent["text"].startswith("Sorry") for sent in telegram.sent) == 2

"""Several agents on the redis bus: a gateway holds the bot, a worker serves every agent, and each agent's state
lives under its own Redis prefix."""

from pathlib import Path

import redis

from bot.app.gateway import Gateway
from bot.llm.provider import ModelProvider
from bot.retry import RetryPolicy
from tests.fakes.openai_server import FakeLLM
from tests.fakes.telegram_server import FakeTelegram
from tests.support.harness import make_config

OWNER = 42
GROUP = -1001


async def test_a_worker_serves_every_agent_and_keeps_their_sessions_under_their_prefixes(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, redis_url: str
) -> None:
    section = {"telegram": {"enabled": True, "token": telegram.token, "api_base": telegram.base_url}}
    agents = {
        "agents": [{"name": "work", "llm": {"model": "openai/work-model"}}],
        "bindings": [{"agent": "work", "channel": "telegram", "chat": str(GROUP)}],
    }
    bus = {"backend": "redis", "url": redis_url}
    nodes = [
        Gateway(
            make_config(tmp_path / role, fake_llm, owners=[f"telegram:{OWNER}"], channels=channels, bus=bus, **agents),
            ModelProvider(make_config(tmp_path, fake_llm).llm, RetryPolicy(base_delay=0.0)),
            role=role,
        )
        for role, channels in (("gateway", section), ("worker", {}))
    ]
    gateway, worker = nodes
    for node in nodes:
        await node.start()
    try:
        telegram.text("@relay_bot for work", chat_id=GROUP, user_id=OWNER, chat_type="supergroup")
        await telegram.wait_for_sent(1)
        telegram.text("for home", chat_id=OWNER, user_id=OWNER)
        await telegram.wait_for_sent(2)
        assert [request["model"] for request in fake_llm.requests] == ["work-model", "fake-model"]
        assert list(worker.roster.built) == ["main", "work"] and list(gateway.roster.built) == ["main"]
    finally:
        for node in reversed(nodes):
            await node.stop()
    keys = [key.decode() for key in redis.Redis.from_url(redis_url).keys("*session*")]
    work_keys = [key for key in keys if key.startswith("relaybot.work:")]
    main_keys = [key for key in keys if key.startswith("relaybot:")]
    assert any(str(GROUP) in key for key in work_keys) and not any(str(GROUP) in key for key in main_keys)
    assert any(f":{OWNER}" in key for key in main_keys) and not any(f":{OWNER}" in key for key in work_keys)

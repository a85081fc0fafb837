"""Roles on the redis bus: a gateway receives, a worker answers; one gateway per bot token, a standby takes over."""

from __future__ import annotations

import asyncio
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from bot.app.gateway import Gateway
from bot.cancelling import cancel_and_wait
from bot.cluster.roles import Role
from bot.errors import ConfigError
from bot.llm.provider import ModelProvider
from bot.retry import RetryPolicy
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.openai_server import FakeLLM, Text
from tests.fakes.telegram_server import FakeTelegram
from tests.support.harness import make_config
from tests.support.polling import until

if TYPE_CHECKING:
    from redis.asyncio import Redis

OWNER = 42


def node(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, url: str, role: Role, host: str, **bus: str
) -> Gateway:
    base = telegram.base_url.replace("127.0.0.1", host)
    config = make_config(
        tmp_path,
        fake_llm,
        owners=[f"telegram:{OWNER}"],
        channels={"telegram": {"enabled": True, "token": telegram.token, "api_base": base}},
        bus={"backend": "redis", "url": url, **bus},
    )
    provider = ModelProvider(config.llm, RetryPolicy(base_delay=0.0))
    return Gateway(config, provider, start_retry=RetryPolicy(base_delay=0.05, max_delay=0.2), role=role)


def pollers(telegram: FakeTelegram) -> set[str]:
    return {host.split(":")[0] for method, host in telegram.hosts if method == "getUpdates"}


async def inbound_pending(gateway: Gateway, n: int) -> None:
    async def arrived() -> bool:
        return (await gateway.agent.bus.stats()).inbound_pending >= n

    await until(arrived, 10)


@pytest.mark.slow
async def test_one_gateway_polls_a_token_and_a_standby_takes_over_when_it_dies(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, redis_url: str
) -> None:
    lease = {"lease": "1500ms"}
    first = node(tmp_path / "a", fake_llm, telegram, redis_url, "gateway", "127.0.0.1", **lease)
    standby = node(tmp_path / "b", fake_llm, telegram, redis_url, "gateway", "localhost", **lease)
    await first.start()
    standby_start = asyncio.create_task(standby.start())
    telegram.text("hello", chat_id=OWNER, user_id=OWNER)
    await inbound_pending(first, 1)
    await asyncio.sleep(1.7)  # longer than the lease: the holder renews, the standby keeps waiting
    assert pollers(telegram) == {"127.0.0.1"} and not standby_start.done()

    for held in first.leases._leases:  # killed: no release, its lease simply stops being renewed
        await cancel_and_wait(held._renewer)
    await first.manager.stop()
    killed = time.monotonic()
    polls_before = len(telegram.hosts)
    await asyncio.wait_for(standby_start, 15)
    assert time.monotonic() - killed < 15
    telegram.text("again", chat_id=OWNER, user_id=OWNER)
    await inbound_pending(standby, 2)
    later = {host.split(":")[0] for method, host in telegram.hosts[polls_before:] if method == "getUpdates"}
    assert later == {"localhost"}
    await standby.stop()
    await first.agent.stop()


async def test_a_gateway_receives_and_a_worker_answers(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, redis_url: str
) -> None:
    gateway = node(tmp_path / "g", fake_llm, telegram, redis_url, "gateway", "127.0.0.1")
    worker = node(tmp_path / "w", fake_llm, telegram, redis_url, "worker", "127.0.0.1")
    await gateway.start()
    await worker.start()
    fake_llm.script(Text("from a worker"))
    telegram.text("hello", chat_id=OWNER, user_id=OWNER)
    (sent,) = await telegram.wait_for_sent(1)
    assert sent["text"] == "from a worker"
    assert len(worker.manager._tasks) == 0 and gateway.roster._dispatcher is None
    await worker.stop()
    await gateway.stop()


async def test_a_telegram_gateway_and_a_discord_gateway_each_deliver_their_own_replies(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, redis_url: str
) -> None:
    async with FakeDiscord() as discord:
        bus = {"backend": "redis", "url": redis_url}
        owners = [f"telegram:{OWNER}", f"discord:{OWNER}"]
        discord_section = {"enabled": True, "token": discord.token}
        discord_section.update(api_base=discord.api_base, gateway_url=discord.gateway_url)
        sections = {
            "telegram": {"telegram": {"enabled": True, "token": telegram.token, "api_base": telegram.base_url}},
            "discord": {"discord": discord_section},
            "worker": {},
        }
        nodes = {
            name: Gateway(
                make_config(tmp_path / name, fake_llm, owners=owners, channels=channels, bus=bus),
                ModelProvider(make_config(tmp_path, fake_llm).llm, RetryPolicy(base_delay=0.0)),
                role="worker" if name == "worker" else "gateway",
            )
            for name, channels in sections.items()
        }
        for started in nodes.values():
            await started.start()
        await nodes["discord"].manager.ready("discord")
        fake_llm.script(Text("to telegram"), Text("to discord"))
        telegram.text("hello", chat_id=OWNER, user_id=OWNER)
        (to_telegram,) = await telegram.wait_for_sent(1)
        discord.dm("hello", user_id=OWNER)
        (to_discord,) = await discord.wait_for_sent(1)
        assert (to_telegram["text"], to_discord["content"]) == ("to telegram", "to discord")

        async def all_sent() -> bool:
            return (await nodes["worker"].agent.bus.stats()).outbound_pending == 0

        await until(all_sent, 10)
        assert len(telegram.sent) == 1 and len(discord.sent) == 1
        for started in reversed(nodes.values()):
            await started.stop()


def test_a_split_role_needs_the_redis_bus(tmp_path: Path, fake_llm: FakeLLM) -> None:
    with pytest.raises(ConfigError, match="bus.backend: redis"):
        Gateway(make_config(tmp_path, fake_llm), role="worker")


async def test_a_standby_takes_the_scheduler_lease_at_once_after_the_channels_when_the_leader_dies(
    tmp_path: Path, fake_llm: FakeLLM, redis_url: str
) -> None:
    from bot.bus.redis.bus import RedisBus
    from bot.cluster.roles import ClusterLeases
    from tests.cluster.test_leases import up_two_seconds

    async def nothing() -> None:
        return None

    async def client_lists(redis: Redis) -> bool:
        return "cmdstat_client|list" in await redis.info("commandstats")

    channels = {"telegram": {"enabled": True, "token": "123:abc"}}
    config = make_config(tmp_path, fake_llm, channels=channels, bus={"backend": "redis", "url": redis_url, "lease": 30})
    leader_bus, standby_bus = (RedisBus(redis_url, consumer=name) for name in ("leader-1", "standby-1"))
    await leader_bus.start()
    await standby_bus.start()
    await until(lambda: up_two_seconds(standby_bus.redis), 5)  # a server just started may miss reconnecting clients
    leader, standby = ClusterLeases(leader_bus, config), ClusterLeases(standby_bus, config)
    await leader.hold_channels(["telegram"], nothing)
    await leader.hold_scheduler(nothing)

    async def stand_by() -> None:
        await standby.hold_channels(["telegram"], nothing)
        await standby.hold_scheduler(nothing)

    waiting = asyncio.create_task(stand_by())
    await until(partial(client_lists, standby_bus.redis), 5)  # the standby looked at who is connected
    assert not waiting.done()
    for held in leader._leases:  # killed: no release, its sockets closed by the kernel
        await cancel_and_wait(held._renewer)
    await leader_bus.stop()
    await asyncio.wait_for(waiting, 10)  # the lease's 30 s would lapse only long after
    assert await standby_bus.redis.get(standby_bus.key("lease", "scheduler")) == "standby-1"
    await standby.release()
    await standby_bus.stop()

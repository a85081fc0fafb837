"""A real `relaybot run --role worker` process SIGKILLed mid-burst: another worker answers everything, once."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections import Counter
from pathlib import Path

import yaml

from bot.app.gateway import Gateway
from bot.bus import ChatRef, InboundMessage, Trust
from bot.bus.redis.bus import RedisBus
from bot.llm.provider import ModelProvider
from bot.retry import RetryPolicy
from tests.fakes.openai_server import FakeLLM
from tests.support.harness import make_config
from tests.support.polling import until

SETTINGS = {
    "heartbeat": {"enabled": False},
    "agent": {"queue_mode": "followup"},
    "shutdown_grace": "0.2s",
}


async def spawn_worker(home: Path, fake_llm: FakeLLM, bus: dict[str, str]) -> asyncio.subprocess.Process:
    home.mkdir(parents=True)
    llm = {"model": "openai/fake-model", "api_key": "sk-test", "api_base": fake_llm.base_url, "timeout": 30}
    (home / "config.yaml").write_text(yaml.safe_dump({"llm": llm, "bus": bus, **SETTINGS}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELAYBOT_")}
    env.update(RELAYBOT_HOME=str(home), LITELLM_LOCAL_MODEL_COST_MAP="True")
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "run", "--role", "worker", env=env, stderr=asyncio.subprocess.DEVNULL
    )


async def test_a_worker_process_killed_mid_burst_loses_nothing(
    tmp_path: Path, fake_llm: FakeLLM, redis_url: str
) -> None:
    bus = {"backend": "redis", "url": redis_url, "lease": "1s", "worker_lease": "1s", "claim_idle": "60s"}
    doomed = await spawn_worker(tmp_path / "doomed", fake_llm, bus)
    gateway = RedisBus(redis_url, consumer="gateway")
    gateway.deliver_for(["telegram"])
    await gateway.start()
    fake_llm.latency = 0.3  # every turn it starts is still running when it dies
    sent = []
    for n in range(24):
        message = InboundMessage(ChatRef("telegram", str(100 + n % 6)), "42", f"m{n}", trust=Trust.OWNER)
        assert await gateway.publish_inbound(message)
        sent.append(message.id)
    await asyncio.wait_for(fake_llm.wait_for_requests(1), 30)
    doomed.send_signal(signal.SIGKILL)
    await doomed.wait()
    killed = time.monotonic()

    config = make_config(tmp_path / "survivor", fake_llm, bus=bus, **SETTINGS)
    survivor = Gateway(config, ModelProvider(config.llm, RetryPolicy(base_delay=0.0)), role="worker")
    await survivor.start()
    replies: Counter[str] = Counter()
    async with asyncio.timeout(30):
        while set(replies) != set(sent):
            reply = await gateway.consume_outbound()
            await gateway.mark_sent(reply.id)
            replies[reply.in_reply_to or ""] += 1
    assert time.monotonic() - killed < 10, "the dead worker's messages went to the survivor once its lease lapsed"

    async def all_run() -> bool:  # no inbound left to run: no reply can come after this
        return (await gateway.stats()).inbound_pending == 0

    await until(all_run, 10)
    assert (await gateway.stats()).outbound_pending == 0, "no second reply to anything"
    assert set(replies.values()) == {1}
    await survivor.stop()
    await gateway.stop()

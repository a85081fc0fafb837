"""Triggers on the redis bus: a gateway takes the webhook, a worker runs the turn, every gateway knows a delivery."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aiohttp

from bot.app.gateway import Gateway
from bot.llm.provider import ModelProvider
from bot.retry import RetryPolicy
from bot.triggers.verification import signature
from tests.fakes.openai_server import FakeLLM, Text
from tests.fakes.telegram_server import FakeTelegram
from tests.support.harness import make_config
from tests.support.webhooks import PULL_REQUEST, SECRET, TARGET, free_port, github_trigger


def node(home: Path, llm: FakeLLM, redis_url: str, role: str, channels: dict[str, Any]) -> Gateway:
    bus = {"backend": "redis", "url": redis_url}
    config = make_config(home, llm, owners=["telegram:42"], channels=channels, bus=bus, triggers=[github_trigger()])
    return Gateway(config, ModelProvider(config.llm, RetryPolicy(base_delay=0.0)), role=role)  # type: ignore[arg-type]


async def post(port: int, body: bytes, delivery: str) -> tuple[int, dict[str, Any]]:
    headers = {
        "X-Hub-Signature-256": signature(SECRET, body),
        "X-GitHub-Event": "pull_request",
        "X-GitHub-Delivery": delivery,
    }
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"http://127.0.0.1:{port}/hooks/github", data=body, headers=headers) as response,
    ):
        return response.status, await response.json()


async def test_a_worker_answers_the_gateways_delivery_and_another_gateway_knows_it(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, redis_url: str
) -> None:
    port = free_port()
    channels = {
        "telegram": {"enabled": True, "token": telegram.token, "api_base": telegram.base_url},
        "api": {"enabled": True, "port": port},
    }
    body = json.dumps(PULL_REQUEST).encode()
    gateway = node(tmp_path / "gateway", fake_llm, redis_url, "gateway", channels)
    worker = node(tmp_path / "worker", fake_llm, redis_url, "worker", {})
    fake_llm.script(Text("Seen on the worker."))
    await gateway.start()
    await worker.start()
    try:
        await gateway.manager.ready("api")
        status, accepted = await post(port, body, "cluster-1")
        [sent] = await telegram.wait_for_sent(1)
        assert gateway.triggers is not None
        ended = await gateway.triggers.runs.wait(accepted["runId"], 10)
    finally:
        await worker.stop()
        await gateway.stop()
    assert status == 202 and sent["chat_id"] == TARGET and sent["text"] == "Seen on the worker."
    assert ended is not None and (ended.outcome, ended.reply) == ("answered", "Seen on the worker.")

    other = node(tmp_path / "other-gateway", fake_llm, redis_url, "gateway", channels)
    await other.start()
    try:
        await other.manager.ready("api")
        again = await post(port, body, "cluster-1")
    finally:
        await other.stop()
    assert again == (200, {"runId": accepted["runId"], "acceptedAt": accepted["acceptedAt"], "duplicate": True})
    assert len(fake_llm.requests) == 1

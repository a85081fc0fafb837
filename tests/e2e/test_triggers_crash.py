"""A delivery is journaled before its 202: SIGKILL the gateway mid-turn, and the restarted one still answers it once."""

from __future__ import annotations

import json
from pathlib import Path

import aiohttp

from bot.triggers.verification import signature
from tests.fakes.openai_server import FakeLLM, Hang, Text
from tests.fakes.telegram_server import FakeTelegram
from tests.support.gateway_process import GatewayProcess
from tests.support.webhooks import PULL_REQUEST, SECRET, TARGET, free_port, github_trigger


async def post(port: int, body: bytes) -> tuple[int, dict]:
    headers = {
        "X-Hub-Signature-256": signature(SECRET, body),
        "X-GitHub-Event": "pull_request",
        "X-GitHub-Delivery": "killed-mid-turn",
    }
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"http://127.0.0.1:{port}/hooks/github", data=body, headers=headers) as response,
    ):
        return response.status, await response.json()


async def test_a_delivery_accepted_before_a_kill_is_answered_once_after_the_restart(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    port = free_port()
    api = {"enabled": True, "port": port}
    bot = GatewayProcess(tmp_path, fake_llm, telegram, [42], channels={"api": api}, triggers=[github_trigger()])
    body = json.dumps(PULL_REQUEST).encode()
    await bot.start()
    fake_llm.script(Hang())
    status, accepted = await post(port, body)
    assert status == 202
    await fake_llm.wait_for_requests(1)
    await bot.kill()

    fake_llm.script(Text("PR 7 is about the flaky build."))
    await bot.start()
    [sent] = await telegram.wait_for_sent(1, timeout=60)
    again = await post(port, body)
    err = await bot.stop()
    assert sent["chat_id"] == TARGET and sent["text"] == "PR 7 is about the flaky build."
    assert again == (200, {"runId": accepted["runId"], "acceptedAt": accepted["acceptedAt"], "duplicate": True})
    assert len(fake_llm.requests) == 2 and "Traceback" not in err

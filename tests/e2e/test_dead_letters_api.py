"""Dead letters from the API channel: a failed run's caller has the error in its response and retries itself, so no
dead letter is kept; a web-chat message (a person whose page shows later replies) stays one, listed and retried."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import openai
import pytest

from tests.channels.api.conftest import OWNER_TOKEN, ApiBot
from tests.channels.api.rpc.test_agent_rpc import RpcSocket, rpc_socket
from tests.e2e.test_dead_letters import cli, letters
from tests.fakes.openai_server import Error, FakeLLM, Reply, echo

KEY_REFUSED = Error(401)  # a model failure the owner mends: a turn with it fails for good


def config_for(bot: ApiBot) -> Path:
    path = bot.config.state_dir.parent / "config.yaml"
    path.write_text(f"workspace: {bot.config.workspace}\nstate_dir: {bot.config.state_dir}\n")
    return path


class Outage:
    """The model refuses the key until `mended`, then echoes."""

    def __init__(self) -> None:
        self.mended = False

    def __call__(self, body: dict) -> Reply:
        return echo(body) if self.mended else KEY_REFUSED


async def test_a_failed_openai_run_is_answered_with_its_error_and_not_kept(tmp_path: Path) -> None:
    async with FakeLLM(default=Outage()) as fake, ApiBot(tmp_path, fake) as bot:
        async with openai.AsyncOpenAI(api_key=OWNER_TOKEN, base_url=f"{bot.url}/v1") as sdk:
            with pytest.raises(openai.InternalServerError) as failed:
                await sdk.chat.completions.create(model="relaybot", messages=[{"role": "user", "content": "hello"}])
        assert failed.value.response.headers["x-should-retry"] == "false"
        assert "API key" in failed.value.body["message"]  # type: ignore[index]
        assert await letters(config_for(bot)) == []


async def test_a_failed_rpc_run_is_not_kept_but_a_web_chat_message_is_and_a_retry_answers_it(tmp_path: Path) -> None:
    outage = Outage()
    async with FakeLLM(default=outage) as fake, ApiBot(tmp_path, fake) as bot:
        config = config_for(bot)
        async with aiohttp.ClientSession() as http:
            rpc = await rpc_socket(http, bot)
            run_id = (await rpc.call("agent", message="a script's run"))["payload"]["runId"]
            assert (await rpc.call("agent.wait", runId=run_id))["payload"]["status"] == "error"
            await rpc.ws.send_json({"type": "message", "text": "a person in the web chat", "id": "c1"})
            apology = await next_frame(rpc, lambda frame: frame["type"] == "error" and frame["reply_to"] == "c1")
            assert "API key" in apology["message"]  # the person is told; the letter waits
            listed = await letters(config)
            assert [(letter["direction"], letter["chat"], letter["preview"]) for letter in listed] == [
                ("in", "api:me:default", "a person in the web chat")
            ]
            assert "ProviderAuthError" in listed[0]["reason"]
            outage.mended = True
            code, output = await cli(config, "queue", "retry", "--all")
            assert code == 0, output
            answer = await next_frame(rpc, lambda frame: frame["type"] == "message" and frame["kind"] == "reply")
        assert answer["text"].endswith("a person in the web chat")  # the echo: the retry ran its turn
        assert await letters(config) == []


async def next_frame(rpc: RpcSocket, wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The first frame read (or already read) that `wanted` picks."""
    while not (found := [frame for frame in rpc.frames if wanted(frame)]):
        rpc.frames.append(await rpc.ws.receive_json(timeout=30))
    return found[0]

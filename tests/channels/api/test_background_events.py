"""What happens in the background reaches API clients: sub-agents in their session, heartbeat ticks to owners."""

from __future__ import annotations

import aiohttp

from tests.channels.api.conftest import GUEST_TOKEN, OWNER_TOKEN, ApiBot, bearer
from tests.fakes.openai_server import Reply, Text, ToolCalls


def spawn_once(body: dict) -> Reply:
    """The main agent spawns a helper and says so; the helper answers; the report is relayed."""
    if "background sub-agent" in body["messages"][0]["content"]:
        return Text("found it")
    last = body["messages"][-1]
    if last["role"] == "tool":
        return Text("Working on it in the background.")
    if "[background task" in str(last["content"]):
        return Text("The helper found it.")
    return ToolCalls((("spawn", {"task": "find it", "label": "finder"}),))


async def test_a_session_hears_its_subagent_spawn_and_complete(api_bot: ApiBot, fake_llm) -> None:
    fake_llm.default = spawn_once
    async with aiohttp.ClientSession() as http, http.ws_connect(api_bot.ws_url, headers=bearer(OWNER_TOKEN)) as ws:
        await ws.receive_json(timeout=5)
        await ws.send_json({"type": "message", "text": "go find it"})
        frames = []
        while not (frames and frames[-1].get("text") == "The helper found it."):
            frames.append(await ws.receive_json(timeout=10))
    helpers = [f for f in frames if f["type"] == "subagent"]
    assert [(f["phase"], f["label"]) for f in helpers] == [("spawned", "finder"), ("completed", "finder")]
    assert helpers[1]["status"] == "finished" and helpers[0]["id"] == helpers[1]["id"]


async def test_heartbeat_ticks_reach_owner_connections_only(api_bot: ApiBot) -> None:
    async with (
        aiohttp.ClientSession() as http,
        http.ws_connect(api_bot.ws_url, headers=bearer(OWNER_TOKEN)) as owner,
        http.ws_connect(api_bot.ws_url, headers=bearer(GUEST_TOKEN)) as guest,
    ):
        await owner.receive_json(timeout=5)
        await guest.receive_json(timeout=5)
        outcome = await api_bot.gateway.heartbeat.tick()
        assert await owner.receive_json(timeout=5) == {"type": "heartbeat", "outcome": outcome.value}
        await guest.send_json({"type": "req", "id": "1", "method": "agent.wait", "params": {"runId": "none"}})
        assert (await guest.receive_json(timeout=5))["type"] == "res"  # the next frame: no tick came before it

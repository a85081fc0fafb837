"""Split roles on the real redis-server: a run started at the gateway's API is carried out by a worker, and the
gateway's subscribers see its lifecycle, assistant and tool events."""

from __future__ import annotations

from pathlib import Path

import aiohttp

from bot.app.gateway import Gateway
from bot.bus import ChatRef
from bot.cluster.roles import Role
from bot.cluster.run_events import decode, encode
from bot.events import HeartbeatTicked, ToolUpdated, TurnFinished
from bot.llm.provider import ModelProvider
from bot.retry import RetryPolicy
from tests.channels.api.conftest import OWNER_TOKEN, bearer, free_port
from tests.channels.api.rpc.test_agent_rpc import RpcSocket
from tests.fakes.openai_server import FakeLLM, Text, ToolCalls
from tests.support.harness import make_config


def node(tmp_path: Path, fake_llm: FakeLLM, redis_url: str, role: Role, channels: dict[str, dict]) -> Gateway:
    config = make_config(tmp_path, fake_llm, channels=channels, bus={"backend": "redis", "url": redis_url})
    return Gateway(config, ModelProvider(config.llm, RetryPolicy(base_delay=0.0)), role=role)


async def test_a_workers_run_events_reach_the_gateways_subscribers(
    tmp_path: Path, fake_llm: FakeLLM, redis_url: str
) -> None:
    port = free_port()
    api = {"enabled": True, "port": port, "tokens": [{"token": OWNER_TOKEN, "name": "me", "trust": "owner"}]}
    gateway = node(tmp_path / "g", fake_llm, redis_url, "gateway", {"api": api})
    worker = node(tmp_path / "w", fake_llm, redis_url, "worker", {})
    seen: list[object] = []
    worker.agent.events.subscribe(seen.append, TurnFinished)
    fake_llm.script(ToolCalls((("list_dir", {"path": "."}),)), Text("All tidy in here.", chunk_delay=0.01))
    await gateway.start()
    await worker.start()
    try:
        await gateway.manager.ready("api")
        async with aiohttp.ClientSession() as http:
            ws = await http.ws_connect(f"ws://127.0.0.1:{port}/ws", headers=bearer(OWNER_TOKEN))
            assert (await ws.receive_json(timeout=5))["type"] == "status"
            rpc = RpcSocket(ws)
            run_id = (await rpc.call("agent", message="look around"))["payload"]["runId"]
            events = await rpc.run_events(run_id)
            outcome = (await rpc.call("agent.wait", runId=run_id))["payload"]
    finally:
        await worker.stop()
        await gateway.stop()
    assert seen and gateway.roster._dispatcher is None  # the turn ran in the worker
    streams = [(f["stream"], f["data"].get("phase")) for f in events]
    assert streams[0] == ("lifecycle", "start") and streams[-1] == ("lifecycle", "end")
    assert [f["seq"] for f in events] == list(range(1, len(events) + 1))
    tools = [(f["data"]["phase"], f["data"]["name"]) for f in events if f["stream"] == "tool"]
    assert tools == [("start", "list_dir"), ("end", "list_dir")]
    deltas = "".join(f["data"].get("delta", "") for f in events if f["stream"] == "assistant")
    assert deltas == "All tidy in here."
    assert outcome["status"] == "ok" and outcome["reply"] == "All tidy in here."
    assert outcome["usage"]["promptTokens"] > 0  # the worker's model calls, counted at the gateway


def test_an_event_survives_its_encoding_for_the_stream() -> None:
    for event in (
        ToolUpdated(ChatRef("api", "me", "default"), "exec", "c1", "half way", "turn-1"),
        HeartbeatTicked("quiet"),
    ):
        fields = encode(event)
        assert decode(str(fields["kind"]), str(fields["body"])) == event

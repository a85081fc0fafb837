"""A run's tool stream carries updates while a tool works (/ws and SSE); a reply a plugin blocks still ends its run."""

from __future__ import annotations

import json
from pathlib import Path

import aiohttp

from tests.channels.api.conftest import OWNER_TOKEN, ApiBot, bearer
from tests.channels.api.rpc.test_agent_rpc import rpc_socket
from tests.fakes.openai_server import FakeLLM, Text, ToolCalls

# Prints, then waits for the test to answer with a file: an update must arrive while the command still runs.
WAITING = "echo first-part; while [ ! -e go ]; do sleep 0.05; done; echo second-part"
EXEC = {"exec": {"sandbox": "off", "approval": "off"}}
BLOCKER = """
from bot.plugins import Block


def register(api):
    api.on("message_sending", lambda event: Block("not for today"))
"""


async def test_exec_output_arrives_as_tool_updates_over_the_socket(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(ToolCalls((("exec", {"command": WAITING}),)), Text("It printed two parts."))
    async with ApiBot(tmp_path, fake_llm, tools=EXEC) as bot, aiohttp.ClientSession() as http:
        rpc = await rpc_socket(http, bot)
        run_id = (await rpc.call("agent", message="run it"))["payload"]["runId"]
        while not any(f.get("stream") == "tool" and "first-part" in f["data"].get("partial", "") for f in rpc.frames):
            rpc.frames.append(await rpc.ws.receive_json(timeout=10))
        (tmp_path / "workspace" / "go").touch()
        events = await rpc.run_events(run_id)
    tools = [f["data"] for f in events if f["stream"] == "tool"]
    assert [t["phase"] for t in tools][0] == "start" and [t["phase"] for t in tools][-1] == "end"
    updates = [t for t in tools if t["phase"] == "update"]
    assert updates[0]["partial"].strip() == "first-part" and updates[0]["name"] == "exec"
    assert updates[0]["callId"] == tools[0]["callId"]
    assert "second-part" in tools[-1]["result"] and all(len(t["partial"]) <= 120 for t in updates)


async def test_tool_updates_stream_as_server_sent_events(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(ToolCalls((("exec", {"command": "seq 1 400; " + WAITING}),)), Text("Counted."))
    async with (
        ApiBot(tmp_path, fake_llm, tools=EXEC) as bot,
        aiohttp.ClientSession(headers=bearer(OWNER_TOKEN)) as http,
    ):
        async with http.post(f"{bot.url}/v1/agent", json={"message": "count"}) as response:
            run_id = (await response.json())["runId"]
        frames = []
        async with http.get(f"{bot.url}/v1/agent/events", params={"runId": run_id}) as response:
            async for line in response.content:
                if line.startswith(b"data: "):
                    frames.append(json.loads(line[6:]))
                    if frames[-1]["stream"] == "tool" and "first-part" in frames[-1]["data"].get("partial", ""):
                        (tmp_path / "workspace" / "go").touch()
    updates = [f["data"] for f in frames if f["stream"] == "tool" and f["data"]["phase"] == "update"]
    assert updates and all(len(update["partial"]) <= 120 for update in updates)
    assert frames[-1]["data"]["phase"] == "end"


async def test_a_reply_a_plugin_blocks_still_ends_its_run(tmp_path: Path, fake_llm: FakeLLM) -> None:
    plugin = tmp_path / "blocker.py"
    plugin.write_text(BLOCKER)
    fake_llm.script(Text("Something the plugin will not let out."))
    async with ApiBot(tmp_path, fake_llm, plugins=[str(plugin)]) as bot, aiohttp.ClientSession() as http:
        rpc = await rpc_socket(http, bot)
        run_id = (await rpc.call("agent", message="say it"))["payload"]["runId"]
        outcome = (await rpc.call("agent.wait", runId=run_id))["payload"]
        events = await rpc.run_events(run_id)
    assert outcome["status"] == "error" and outcome["error"] == "reply blocked by a plugin: not for today"
    assert outcome["endedAt"] is not None and "reply" not in outcome
    assert events[-1]["data"]["phase"] == "error" and events[-1]["data"]["error"] == outcome["error"]
    assert not [f for f in events if f["stream"] == "assistant" and "text" in f["data"]]


async def test_another_socket_subscribes_to_a_run_and_hears_it_to_the_end(api_bot: ApiBot, fake_llm: FakeLLM) -> None:
    fake_llm.script(Text("Heard by both.", latency=2.0))  # time enough to subscribe before it answers
    async with aiohttp.ClientSession() as http:
        starter = await rpc_socket(http, api_bot)
        watcher = await rpc_socket(http, api_bot)
        run_id = (await starter.call("agent", message="tell us both"))["payload"]["runId"]
        subscribed = await watcher.call("agent.subscribe", runId=run_id)
        heard = await watcher.run_events(run_id)
        refused = await watcher.call("agent.subscribe", runId="no-such-run")
    assert subscribed["payload"] == {"runId": run_id, "ended": False}
    assert heard[-1]["stream"] == "lifecycle" and heard[-1]["data"]["phase"] == "end"
    assert "".join(f["data"].get("delta", "") for f in heard if f["stream"] == "assistant") == "Heard by both."
    assert refused["ok"] is False and refused["error"]["status"] == 404

"""The agent RPC on /ws and over HTTP, against the real gateway and the fake LLM."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.bus import ChatRef, InboundMessage
from bot.events import TurnFinished, TurnStarted
from tests.channels.api.conftest import GUEST_TOKEN, OWNER_TOKEN, ApiBot, bearer
from tests.fakes.openai_server import Error, Text, ToolCalls
from tests.support.harness import next_event


class RpcSocket:
    """A WebSocket client that makes calls and keeps every other frame it reads."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.frames: list[dict[str, Any]] = []
        self._ids = 0

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send a `req` and return its `res`."""
        self._ids += 1
        await self.ws.send_json({"type": "req", "id": str(self._ids), "method": method, "params": params})
        while True:
            frame = await self.ws.receive_json(timeout=10)
            if frame["type"] == "res" and frame["id"] == str(self._ids):
                return frame
            self.frames.append(frame)

    async def run_events(self, run_id: str) -> list[dict[str, Any]]:
        """The run's event frames, through its lifecycle end."""
        while not any(f["data"].get("phase") in ("end", "error") for f in self._of(run_id, "lifecycle")):
            self.frames.append(await self.ws.receive_json(timeout=10))
        return [f for f in self.frames if f["type"] == "agent" and f["runId"] == run_id]

    def _of(self, run_id: str, stream: str) -> list[dict[str, Any]]:
        return [f for f in self.frames if f["type"] == "agent" and f["runId"] == run_id and f["stream"] == stream]


async def rpc_socket(http: aiohttp.ClientSession, bot: ApiBot, token: str = OWNER_TOKEN) -> RpcSocket:
    ws = await http.ws_connect(bot.ws_url, headers=bearer(token))
    assert (await ws.receive_json(timeout=5))["type"] == "status"
    return RpcSocket(ws)


async def test_agent_answers_at_once_and_the_run_streams_its_events(api_bot: ApiBot, fake_llm, tmp_path) -> None:
    fake_llm.script(ToolCalls((("list_dir", {"path": "."}),)), Text("Nothing much in there, all tidy."))
    async with aiohttp.ClientSession() as http:
        rpc = await rpc_socket(http, api_bot)
        accepted = await rpc.call("agent", message="look around", session="work")
        assert accepted["ok"] is True and set(accepted["payload"]) == {"runId", "acceptedAt"}
        run_id = accepted["payload"]["runId"]
        events = await rpc.run_events(run_id)
        done = await rpc.call("agent.wait", runId=run_id)
    streams = [(f["stream"], f["data"].get("phase")) for f in events]
    assert streams[0] == ("lifecycle", "start") and streams[-1] == ("lifecycle", "end")
    assert [f["seq"] for f in events] == list(range(1, len(events) + 1))
    tools = [f["data"] for f in events if f["stream"] == "tool"]
    assert [(t["phase"], t["name"]) for t in tools] == [("start", "list_dir"), ("end", "list_dir")]
    assert tools[1]["ok"] is True and len(tools[1]["result"]) <= 120
    deltas = "".join(f["data"].get("delta", "") for f in events if f["stream"] == "assistant")
    assert deltas == "Nothing much in there, all tidy."
    outcome = done["payload"]
    assert outcome["status"] == "ok" and outcome["reply"] == "Nothing much in there, all tidy."
    assert accepted["payload"]["acceptedAt"] <= outcome["startedAt"] <= outcome["endedAt"]


async def test_the_same_idempotency_key_never_starts_a_second_run(api_bot: ApiBot, fake_llm) -> None:
    async with aiohttp.ClientSession() as http:
        rpc = await rpc_socket(http, api_bot)
        first = await rpc.call("agent", message="once", idempotencyKey="k-1")
        again = await rpc.call("agent", message="once", idempotencyKey="k-1")
        assert first["payload"] == again["payload"]
        assert (await rpc.call("agent.wait", runId=first["payload"]["runId"]))["payload"]["status"] == "ok"
        other = await rpc.call("agent", message="twice", idempotencyKey="k-2")
        assert (await rpc.call("agent.wait", runId=other["payload"]["runId"]))["payload"]["reply"].endswith("twice")
    assert len(fake_llm.requests) == 2


async def test_a_wait_that_times_out_leaves_the_run_going(api_bot: ApiBot, fake_llm) -> None:
    fake_llm.script(Text("Worth the wait.", latency=1.0))
    async with aiohttp.ClientSession() as http:
        rpc = await rpc_socket(http, api_bot)
        run_id = (await rpc.call("agent", message="take your time"))["payload"]["runId"]
        await fake_llm.wait_for_requests(1)
        early = (await rpc.call("agent.wait", runId=run_id, timeoutMs=0))["payload"]
        late = (await rpc.call("agent.wait", runId=run_id, timeoutMs=20_000))["payload"]
    assert early["status"] == "timeout" and early["endedAt"] is None and early["startedAt"] is not None
    assert late["status"] == "ok" and late["reply"] == "Worth the wait."
    assert fake_llm.disconnects == 0


async def test_a_failed_run_ends_with_an_error(api_bot: ApiBot, fake_llm) -> None:
    fake_llm.script(*[Error(400, "bad request")] * 3)
    async with aiohttp.ClientSession() as http:
        rpc = await rpc_socket(http, api_bot)
        run_id = (await rpc.call("agent", message="fail"))["payload"]["runId"]
        outcome = (await rpc.call("agent.wait", runId=run_id))["payload"]
        events = await rpc.run_events(run_id)
    assert outcome["status"] == "error" and outcome["error"] == "provider error"
    assert events[-1]["data"] == {"phase": "error", "endedAt": outcome["endedAt"], "error": "provider error"}


async def test_a_run_acts_with_its_tokens_role(api_bot: ApiBot, fake_llm) -> None:
    async with aiohttp.ClientSession() as http:
        for token in (GUEST_TOKEN, OWNER_TOKEN):
            rpc = await rpc_socket(http, api_bot, token)
            run_id = (await rpc.call("agent", message="hello"))["payload"]["runId"]
            assert (await rpc.call("agent.wait", runId=run_id))["payload"]["status"] == "ok"
            await rpc.ws.close()
    guest, owner = ({t["function"]["name"] for t in body.get("tools", [])} for body in fake_llm.requests)
    assert "read_file" not in guest and "read_file" in owner


async def test_runs_of_another_token_and_unknown_calls_are_refused(api_bot: ApiBot) -> None:
    async with aiohttp.ClientSession() as http:
        owner = await rpc_socket(http, api_bot)
        run_id = (await owner.call("agent", message="mine"))["payload"]["runId"]
        guest = await rpc_socket(http, api_bot, GUEST_TOKEN)
        refused = await guest.call("agent.wait", runId=run_id)
        unknown = await guest.call("agent.fly")
        empty = await guest.call("agent", message=" ")
    assert refused["ok"] is False and refused["error"] == {"message": "no such run", "status": 404}
    assert "unknown method" in unknown["error"]["message"]
    assert empty["error"]["message"] == "agent needs a message"


async def test_http_starts_waits_for_and_watches_a_run(api_bot: ApiBot, fake_llm, tmp_path: Path) -> None:
    fake_llm.script(Text("Over plain HTTP.", chunk_delay=0.01))
    async with aiohttp.ClientSession(headers=bearer(OWNER_TOKEN)) as http:
        async with http.post(f"{api_bot.url}/v1/agent", json={"message": "hi", "idempotencyKey": "h1"}) as response:
            run_id = (await response.json())["runId"]
        async with http.get(f"{api_bot.url}/v1/agent/events", params={"runId": run_id}) as response:
            assert response.headers["Content-Type"] == "text/event-stream"
            body = await response.text()
        async with http.post(f"{api_bot.url}/v1/agent/wait", json={"runId": run_id, "timeoutMs": 5000}) as response:
            outcome = await response.json()
        async with http.post(f"{api_bot.url}/v1/agent/wait", json={"runId": "nope"}) as response:
            assert response.status == 404
    frames = [json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: ")]
    assert frames[-1]["stream"] == "lifecycle" and frames[-1]["data"]["phase"] == "end"
    assert {f["runId"] for f in frames} == {run_id}
    assert outcome["status"] == "ok" and outcome["reply"] == "Over plain HTTP."


async def test_a_command_run_ends_with_its_answer(api_bot: ApiBot) -> None:
    async with aiohttp.ClientSession() as http:
        rpc = await rpc_socket(http, api_bot)
        run_id = (await rpc.call("agent", message="/new"))["payload"]["runId"]
        outcome = (await rpc.call("agent.wait", runId=run_id))["payload"]
    assert outcome["status"] == "ok" and outcome["reply"] == "Started a new conversation."


async def test_a_chat_message_is_a_run_too(api_bot: ApiBot, fake_llm) -> None:
    async with aiohttp.ClientSession() as http:
        rpc = await rpc_socket(http, api_bot)
        await rpc.ws.send_json({"type": "message", "text": "plain chat"})
        while (frame := await rpc.ws.receive_json(timeout=10)).get("state") != "working":
            pass
        outcome = (await rpc.call("agent.wait", runId=frame["run_id"]))["payload"]
    assert outcome["status"] == "ok" and outcome["reply"].endswith("plain chat")


async def test_a_turn_that_is_no_run_passes_the_run_book_by(
    api_bot: ApiBot, fake_llm, caplog: pytest.LogCaptureFixture
) -> None:
    fake_llm.script(Text("NO_REPLY"))
    note = InboundMessage(ChatRef("api", "me", "default"), "cron", "a scheduled nudge", kind="system", origin="cron")
    await api_bot.gateway.agent.bus.publish_inbound(note)
    finished = await next_event(api_bot.gateway.agent.events, TurnFinished)
    assert finished.replied is False and api_bot.gateway.api is not None
    assert api_bot.gateway.api.runs.find("me", note.id) is None
    assert not [r for r in caplog.records if "listener failed" in r.getMessage()]


async def test_a_run_is_held_to_its_tokens_budget(tmp_path: Path, fake_llm) -> None:
    async with (
        ApiBot(tmp_path, fake_llm, budgets={"guest": {"monthly_tokens": 1}}) as bot,
        aiohttp.ClientSession() as http,
    ):
        guest = await rpc_socket(http, bot, GUEST_TOKEN)
        first = (await guest.call("agent", message="spend it"))["payload"]["runId"]
        assert (await guest.call("agent.wait", runId=first))["payload"]["status"] == "ok"
        second = (await guest.call("agent", message="and more"))["payload"]["runId"]
        outcome = (await guest.call("agent.wait", runId=second))["payload"]
    assert outcome["status"] == "error" and outcome["error"] == "budget exceeded"
    assert len(fake_llm.requests) == 1  # checked before the call, never after


async def test_runs_in_one_session_take_turns_in_its_lane(api_bot: ApiBot, fake_llm) -> None:
    fake_llm.script(Text("first", latency=0.2), Text("second"))
    order: list[str] = []
    api_bot.gateway.agent.events.subscribe(lambda e: order.append(type(e).__name__), TurnStarted, TurnFinished)
    async with aiohttp.ClientSession() as http:
        rpc = await rpc_socket(http, api_bot)
        runs = [(await rpc.call("agent", message=text, session="lane"))["payload"]["runId"] for text in ("a", "b")]
        replies = [(await rpc.call("agent.wait", runId=run))["payload"]["reply"] for run in runs]
    assert replies == ["first", "second"]
    assert order == ["TurnStarted", "TurnFinished", "TurnStarted", "TurnFinished"]

"""The WebSocket protocol, spoken by aiohttp's client against the real gateway and the fake LLM."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest

from tests.channels.api.conftest import GUEST_TOKEN, OWNER_TOKEN, ApiBot, bearer
from tests.fakes.openai_server import Hang, Text, ToolCalls


async def frames_until_reply(ws: aiohttp.ClientWebSocketResponse) -> list[dict]:
    """Every frame up to and including the turn's final `message`, then a short wait proving no second one."""
    frames = []
    while True:
        frame = await ws.receive_json(timeout=10)
        frames.append(frame)
        if frame["type"] in ("message", "error"):
            break
    while True:
        try:
            frame = await ws.receive_json(timeout=0.3)
        except TimeoutError:
            return frames
        frames.append(frame)


async def test_message_streams_in_and_the_reply_comes_exactly_once_before_idle(api_bot: ApiBot, fake_llm) -> None:
    fake_llm.script(Text("Hello there, this is a streamed reply of some length."))
    async with aiohttp.ClientSession() as http, http.ws_connect(f"{api_bot.url}/ws", headers=bearer(OWNER_TOKEN)) as ws:
        hello = await ws.receive_json(timeout=5)
        assert hello["type"] == "status" and hello["session"] == "default"
        await ws.send_json({"type": "message", "text": "hi", "id": "c1"})
        frames = await frames_until_reply(ws)
    kinds = [f["type"] for f in frames]
    assert kinds.index("stream_start") < kinds.index("stream_chunk") < kinds.index("stream_end")
    chunks = "".join(f["text"] for f in frames if f["type"] == "stream_chunk")
    assert chunks == "Hello there, this is a streamed reply of some length."
    replies = [f for f in frames if f["type"] == "message"]
    text = "Hello there, this is a streamed reply of some length."
    assert replies == [{"type": "message", "text": text, "reply_to": "c1", "kind": "reply"}]
    idle = {"type": "status", "state": "idle", "outcome": "answered", "replied": True, "reply_to": "c1"}
    assert frames[-2:] == [replies[0], idle]  # the reply first, then the turn's end


async def test_tool_progress_is_sent_as_tool_call_and_tool_result(api_bot: ApiBot, fake_llm, tmp_path) -> None:
    fake_llm.script(ToolCalls((("list_dir", {"path": "."}),)), Text("done"))
    async with (
        aiohttp.ClientSession() as http,
        http.ws_connect(f"{api_bot.url}/ws", headers={"Authorization": f"Bearer {OWNER_TOKEN}"}) as ws,
    ):
        await ws.receive_json(timeout=5)
        await ws.send_json({"type": "message", "text": "look around"})
        frames = await frames_until_reply(ws)
    calls = [f for f in frames if f["type"] in ("tool_call", "tool_result")]
    assert [(f["type"], f["name"]) for f in calls] == [("tool_call", "list_dir"), ("tool_result", "list_dir")]
    assert calls[1]["ok"] is True
    assert [f["text"] for f in frames if f["type"] == "message"] == ["done"]


async def test_session_key_names_token_and_session_and_trust_follows_token(api_bot: ApiBot, fake_llm) -> None:
    seen = []
    api_bot.gateway.agent.events.subscribe(lambda e: seen.append(e.session_key) if hasattr(e, "turn_id") else None)
    async with aiohttp.ClientSession() as http, http.ws_connect(f"{api_bot.url}/ws", headers=bearer(GUEST_TOKEN)) as ws:
        await ws.receive_json(timeout=5)
        await ws.send_json({"type": "message", "text": "hello", "session": "work"})
        frames = await frames_until_reply(ws)
    assert "api:visitor:work" in seen
    assert frames[0] == {"type": "status", "state": "connected", "session": "work", "history": []}
    tools_offered = {t["function"]["name"] for t in fake_llm.requests[-1].get("tools", [])}
    assert "exec" not in tools_offered and "write_file" not in tools_offered


async def test_new_starts_a_fresh_conversation(api_bot: ApiBot, fake_llm) -> None:
    async with aiohttp.ClientSession() as http, http.ws_connect(f"{api_bot.url}/ws", headers=bearer(OWNER_TOKEN)) as ws:
        await ws.receive_json(timeout=5)
        await ws.send_json({"type": "new"})
        frames = await frames_until_reply(ws)
    assert [f["text"] for f in frames if f["type"] == "message"] == ["Started a new conversation."]


async def test_stop_cancels_the_running_turn(api_bot: ApiBot, fake_llm) -> None:
    fake_llm.script(Hang())
    async with aiohttp.ClientSession() as http, http.ws_connect(f"{api_bot.url}/ws", headers=bearer(OWNER_TOKEN)) as ws:
        await ws.receive_json(timeout=5)
        await ws.send_json({"type": "message", "text": "take forever", "id": "slow"})
        assert (await ws.receive_json(timeout=5))["state"] == "working"
        await ws.send_json({"type": "stop"})
        while (frame := await ws.receive_json(timeout=10))["type"] != "status" or frame["state"] != "idle":
            pass
    assert frame["outcome"] == "cancelled" and frame["reply_to"] == "slow"


async def test_reconnect_gets_recent_history(api_bot: ApiBot, fake_llm) -> None:
    fake_llm.script(Text("noted"))
    async with aiohttp.ClientSession() as http:
        async with http.ws_connect(f"{api_bot.url}/ws", headers=bearer(OWNER_TOKEN)) as ws:
            await ws.receive_json(timeout=5)
            await ws.send_json({"type": "message", "text": "remember me"})
            await frames_until_reply(ws)
        async with http.ws_connect(f"{api_bot.url}/ws", headers=bearer(OWNER_TOKEN)) as ws:
            hello = await ws.receive_json(timeout=5)
    assert hello["history"] == [{"role": "user", "text": "remember me"}, {"role": "bot", "text": "noted"}]


async def test_history_survives_a_restart(tmp_path: Path, fake_llm) -> None:
    fake_llm.script(Text("noted"))
    async with (
        ApiBot(tmp_path, fake_llm) as bot,
        aiohttp.ClientSession() as http,
        http.ws_connect(f"{bot.url}/ws?session=diary", headers=bearer(OWNER_TOKEN)) as ws,
    ):
        await ws.receive_json(timeout=5)
        await ws.send_json({"type": "message", "text": "remember me"})
        await frames_until_reply(ws)
    async with (
        ApiBot(tmp_path, fake_llm) as bot,
        aiohttp.ClientSession() as http,
        http.get(f"{bot.url}/history?session=diary", headers=bearer(OWNER_TOKEN)) as response,
    ):
        body = await response.json()
    expected = [{"role": "user", "text": "remember me"}, {"role": "bot", "text": "noted"}]
    assert body == {"session": "diary", "messages": expected}


async def test_bad_frames_get_an_error_frame(api_bot: ApiBot) -> None:
    async with aiohttp.ClientSession() as http, http.ws_connect(f"{api_bot.url}/ws", headers=bearer(OWNER_TOKEN)) as ws:
        await ws.receive_json(timeout=5)
        await ws.send_str("not json")
        assert (await ws.receive_json(timeout=5))["type"] == "error"
        await ws.send_json({"type": "dance"})
        assert (await ws.receive_json(timeout=5)) == {"type": "error", "message": "unknown frame type 'dance'"}


async def test_wrong_bearer_token_is_refused_at_the_handshake(api_bot: ApiBot) -> None:
    async with aiohttp.ClientSession() as http:
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await http.ws_connect(f"{api_bot.url}/ws", headers=bearer("wrong"))
    assert refused.value.status == 401


async def test_the_documented_example_client_prints_the_streamed_reply(api_bot: ApiBot, fake_llm) -> None:
    import asyncio
    import re
    import sys
    from pathlib import Path

    page = (Path(__file__).resolve().parents[3] / "docs" / "platforms" / "web.md").read_text()
    script = re.search(r"A runnable client.*?```python\n(.*?)```", page, re.S).group(1)
    fake_llm.script(Text("I can chat, run tools and remember things."))
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        script.replace("127.0.0.1:18790", f"127.0.0.1:{api_bot.port}"),
        env={"RELAYBOT_API_TOKEN": OWNER_TOKEN, "PATH": "/usr/bin:/bin"},
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode == 0
    assert out.decode() == "I can chat, run tools and remember things.\n"


async def test_an_event_of_no_session_passes_the_channel_by(caplog: pytest.LogCaptureFixture) -> None:
    from bot.config.channels.api import ApiConfig
    from bot.events import CronSkipped, EventBus
    from channels.api.channel import ApiChannel

    async def publish(message: object) -> None: ...

    events = EventBus()
    channel = ApiChannel(publish, ApiConfig(host="127.0.0.1", port=0), events)
    await channel.start()
    try:
        events.emit(CronSkipped("daily", 90.0))
    finally:
        await channel.stop()
    assert "event listener failed" not in caplog.text

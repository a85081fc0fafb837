"""Choices over the WebSocket and in the web chat: numbered lines plus the choices as data; a number answers."""

from __future__ import annotations

from pathlib import Path

import aiohttp

from tests.channels.api.conftest import OWNER_TOKEN, ApiBot, bearer
from tests.fakes.openai_server import Text, ToolCalls


async def test_a_question_arrives_numbered_and_a_typed_number_answers_it(api_bot: ApiBot, fake_llm) -> None:
    ask = ("ask_user", {"question": "Which colour?", "options": ["red", "green"]})
    fake_llm.script(ToolCalls((ask,)), Text("Red it is."))
    async with aiohttp.ClientSession() as http, http.ws_connect(f"{api_bot.url}/ws", headers=bearer(OWNER_TOKEN)) as ws:
        await ws.receive_json(timeout=5)
        await ws.send_json({"type": "message", "text": "pick", "id": "c1"})
        while (frame := await ws.receive_json(timeout=10)).get("prompt_id") is None:
            pass
        assert frame["text"] == "Which colour?\n1. red\n2. green"
        assert frame["choices"] == [{"id": "1", "label": "red"}, {"id": "2", "label": "green"}]
        await ws.send_json({"type": "message", "text": "1", "id": "c2"})
        while not ((frame := await ws.receive_json(timeout=10))["type"] == "message" and frame["kind"] == "reply"):
            pass
        assert frame["text"] == "Red it is."
    tool = [m["content"] for m in fake_llm.requests[1]["messages"] if m["role"] == "tool"]
    assert tool == ["me answered: red"]


async def test_the_dashboard_shows_the_model_a_chat_chose(tmp_path: Path, fake_llm) -> None:
    models = {"models": [{"name": "openai/big-model", "alias": "big"}]}
    async with (
        ApiBot(tmp_path, fake_llm, llm=models) as bot,
        aiohttp.ClientSession(headers=bearer(OWNER_TOKEN)) as http,
        http.ws_connect(f"{bot.url}/ws") as ws,
    ):
        await ws.receive_json(timeout=5)
        await ws.send_json({"type": "message", "text": "/model", "id": "c1"})
        while (menu := await ws.receive_json(timeout=10))["type"] != "message":
            pass
        assert menu["text"].endswith("1. big\n2. default") and menu["prompt_id"] == "model"
        await ws.send_json({"type": "message", "text": "1", "id": "c2"})
        while (shown := await ws.receive_json(timeout=10))["type"] != "message":
            pass
        assert shown["text"] == "This chat now uses openai/big-model (big), chosen by me."
        fake_llm.script(Text("hello"))
        await ws.send_json({"type": "message", "text": "hi", "id": "c3"})
        while (reply := await ws.receive_json(timeout=10))["type"] != "message":
            pass
        async with http.get(f"{bot.url}/admin/state") as response:
            state = await response.json()
    assert reply["text"] == "hello" and fake_llm.requests[0]["model"] == "big-model"
    [session] = [s for s in state["sessions"] if s["key"] == "api:me:default"]
    assert session["model"] == "openai/big-model (big)"

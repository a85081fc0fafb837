"""Reasoning in the web chat: streamed as `reasoning` frames, and kept in the history shown after a reload."""

from __future__ import annotations

import aiohttp

from channels.api.transcript import chat_history
from tests.channels.api.conftest import OWNER_TOKEN, ApiBot, bearer
from tests.fakes.openai_server import Text


async def test_reasoning_streams_as_frames_and_comes_back_with_the_history(api_bot: ApiBot, fake_llm) -> None:
    fake_llm.script(Text("The answer.", reasoning="First I weighed the options."))
    async with aiohttp.ClientSession() as http:
        async with http.ws_connect(api_bot.ws_url, headers=bearer(OWNER_TOKEN)) as ws:
            await ws.receive_json(timeout=5)
            await ws.send_json({"type": "message", "text": "think about it"})
            frames = []
            while not frames or frames[-1]["type"] != "message":
                frames.append(await ws.receive_json(timeout=10))
        async with http.ws_connect(api_bot.ws_url, headers=bearer(OWNER_TOKEN)) as ws:
            history = (await ws.receive_json(timeout=5))["history"]
    assert "".join(f["text"] for f in frames if f["type"] == "reasoning") == "First I weighed the options."
    assert history[-1] == {"role": "bot", "text": "The answer.", "reasoning": "First I weighed the options."}


def test_history_carries_reasoning_only_where_there_was_some() -> None:
    stored = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Hello.", "reasoning": "A greeting."},
        {"role": "assistant", "content": "Plain."},
    ]
    assert chat_history(stored)[1:] == [
        {"role": "bot", "text": "Hello.", "reasoning": "A greeting."},
        {"role": "bot", "text": "Plain."},
    ]

"""The fake OpenAI server, driven by the real litellm; plus the loopback-only network guard."""

import asyncio
import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import litellm
import pytest

from tests.fakes.openai_server import Error, FakeLLM, Hang, Text, ToolCalls

REPO_ROOT = Path(__file__).resolve().parents[2]
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
            "required": ["city"],
        },
    },
}


@pytest.fixture(autouse=True)
def quiet_litellm(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep litellm from printing its 'Give Feedback' banner on every error."""
    monkeypatch.setattr(litellm, "suppress_debug_info", True)


async def complete(fake: FakeLLM, text: str = "hi", **kwargs: Any) -> Any:
    """One litellm call against the fake, failing at once instead of retrying."""
    kwargs.setdefault("messages", [{"role": "user", "content": text}])
    return await litellm.acompletion(
        model="openai/fake-model",
        api_base=fake.base_url,
        api_key="sk-test",
        num_retries=0,
        max_retries=0,
        **kwargs,
    )


async def test_scripted_text_arrives_as_a_chat_completion(fake_llm: FakeLLM) -> None:
    fake_llm.script(Text("Hello there."))

    response = await complete(fake_llm, "hi")

    assert response.choices[0].message.content == "Hello there."
    assert response.choices[0].finish_reason == "stop"
    assert response.usage.total_tokens == response.usage.prompt_tokens + response.usage.completion_tokens
    assert fake_llm.requests[0]["model"] == "fake-model"
    assert fake_llm.requests[0]["messages"] == [{"role": "user", "content": "hi"}]


async def test_streamed_text_reassembles_to_the_scripted_text(fake_llm: FakeLLM) -> None:
    text = "A reply long enough to be split over several streamed chunks."
    fake_llm.script(Text(text))

    stream = await complete(fake_llm, stream=True)
    deltas = [chunk.choices[0].delta.content async for chunk in stream if chunk.choices]

    assert "".join(d for d in deltas if d) == text
    assert sum(1 for d in deltas if d) >= 5
    assert fake_llm.requests[0]["stream"] is True


async def test_usage_chunk_is_streamed_only_when_requested(fake_llm: FakeLLM) -> None:
    stream = await complete(fake_llm, "count me", stream=True, stream_options={"include_usage": True})
    chunks = [chunk async for chunk in stream]

    assert fake_llm.requests[0]["stream_options"] == {"include_usage": True}
    usages = [chunk.usage for chunk in chunks if getattr(chunk, "usage", None)]
    assert usages and usages[-1].prompt_tokens == len("count me") // 4


async def test_streamed_tool_call_fragments_reassemble_by_index(fake_llm: FakeLLM) -> None:
    arguments = {"city": "Rio de Janeiro", "unit": "c"}
    fake_llm.script(ToolCalls((("get_weather", arguments), ("get_weather", '{"city": "Os'))))

    stream = await complete(fake_llm, "weather?", tools=[WEATHER_TOOL], stream=True)
    calls: dict[int, dict[str, str]] = {}
    fragments = 0
    finish_reason = None
    async for chunk in stream:
        if not chunk.choices:
            continue
        finish_reason = chunk.choices[0].finish_reason or finish_reason
        for part in chunk.choices[0].delta.tool_calls or []:
            fragments += 1
            call = calls.setdefault(part.index, {"id": "", "name": "", "arguments": ""})
            call["id"] = part.id or call["id"]
            call["name"] = part.function.name or call["name"]
            call["arguments"] += part.function.arguments or ""

    assert fragments > len(calls) == 2
    assert finish_reason == "tool_calls"
    assert calls[0]["name"] == "get_weather"
    assert json.loads(calls[0]["arguments"]) == arguments
    assert calls[1]["arguments"] == '{"city": "Os'
    assert calls[0]["id"] != calls[1]["id"]
    assert all(call["id"].startswith("call_") for call in calls.values())
    assert fake_llm.requests[0]["tools"][0]["function"]["name"] == "get_weather"


async def test_tool_call_without_streaming(fake_llm: FakeLLM) -> None:
    fake_llm.script(ToolCalls((("get_weather", {"city": "Oslo"}),)))

    response = await complete(fake_llm, "weather?", tools=[WEATHER_TOOL])

    (call,) = response.choices[0].message.tool_calls
    assert (call.function.name, json.loads(call.function.arguments)) == ("get_weather", {"city": "Oslo"})
    assert response.choices[0].finish_reason == "tool_calls"


async def test_tool_call_wire_format_sends_arguments_in_fragments(fake_llm: FakeLLM) -> None:
    fake_llm.script(ToolCalls((("get_weather", {"city": "Rio de Janeiro"}),), content="Checking."))
    request = {"model": "m", "messages": [], "stream": True}
    async with (
        aiohttp.ClientSession() as http,
        http.post(fake_llm.base_url + "/chat/completions", json=request) as resp,
    ):
        assert resp.headers["Content-Type"].startswith("text/event-stream")
        events = [line[6:] for line in (await resp.text()).split("\n\n") if line.startswith("data: ")]

    assert events[-1] == "[DONE]"
    chunks = [json.loads(event) for event in events[:-1]]
    fragments = [part for c in chunks for part in c["choices"][0]["delta"].get("tool_calls", [])]
    first, *rest = fragments
    assert first["id"] == "call_1" and first["type"] == "function" and first["function"]["name"] == "get_weather"
    assert rest and all(set(part) == {"index", "function"} and set(part["function"]) == {"arguments"} for part in rest)
    assert "".join(part["function"]["arguments"] for part in fragments) == '{"city": "Rio de Janeiro"}'
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks) == "Checking."
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


async def test_a_stream_cut_short_looks_finished_to_litellm_except_for_received_finish_reason(
    fake_llm: FakeLLM,
) -> None:
    # The fact bot.llm relies on to tell a cut stream from a finished one.
    fake_llm.script(Text("hello there friend", cut_after=2), Text("hello there friend", finish_reason="length"))

    cut = await complete(fake_llm, stream=True)
    cut_chunks = [chunk async for chunk in cut]
    whole = await complete(fake_llm, stream=True)
    _ = [chunk async for chunk in whole]

    assert "".join(c.choices[0].delta.content or "" for c in cut_chunks if c.choices) == "hello there frie"
    assert cut_chunks[-1].choices[0].finish_reason == "stop" and cut.received_finish_reason is None
    assert whole.received_finish_reason == "length"


async def test_a_dropped_stream_raises_after_its_first_chunks(fake_llm: FakeLLM) -> None:
    fake_llm.script(Text("hello there friend", cut_after=2, cut="drop"))

    stream = await complete(fake_llm, stream=True)
    seen: list[str] = []
    with pytest.raises(litellm.ServiceUnavailableError, match="payload is not completed"):
        async for chunk in stream:
            seen.append(chunk.choices[0].delta.content or "")

    assert "".join(seen) == "hello there frie"


async def test_error_headers_and_raw_bodies_reach_the_client(fake_llm: FakeLLM) -> None:
    fake_llm.script(Error(429, headers={"Retry-After": "7"}), Error(404, body="404 page not found"))

    with pytest.raises(litellm.RateLimitError) as limited:
        await complete(fake_llm)
    with pytest.raises(litellm.NotFoundError, match="404 page not found"):
        await complete(fake_llm)

    assert limited.value.litellm_response_headers["retry-after"] == "7"


async def test_401_raises_authentication_error(fake_llm: FakeLLM) -> None:
    fake_llm.script(Error(401))

    with pytest.raises(litellm.AuthenticationError, match="Incorrect API key"):
        await complete(fake_llm)


async def test_404_raises_not_found(fake_llm: FakeLLM) -> None:
    fake_llm.script(Error(404))

    with pytest.raises(litellm.NotFoundError):
        await complete(fake_llm)


async def test_500_fails_after_one_request_when_retries_are_off(fake_llm: FakeLLM) -> None:
    fake_llm.script(Error(500, "boom"), Text("never sent"))

    with pytest.raises(litellm.InternalServerError, match="boom"):
        await complete(fake_llm)

    assert len(fake_llm.requests) == 1


async def test_unscripted_requests_echo_the_last_user_text(fake_llm: FakeLLM) -> None:
    messages = [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": [{"type": "text", "text": "second "}, {"type": "text", "text": "part"}]},
    ]

    response = await complete(fake_llm, messages=messages)

    assert response.choices[0].message.content == "echo: second part"


async def test_custom_default_decides_when_the_script_is_empty() -> None:
    async with FakeLLM(default=lambda body: Text(f"{len(body['messages'])} messages")) as fake:
        fake.script(Text("scripted"))
        first = await complete(fake)
        second = await complete(fake)

    assert (first.choices[0].message.content, second.choices[0].message.content) == ("scripted", "1 messages")


async def test_latency_delays_the_answer() -> None:
    async with FakeLLM(latency=0.05) as fake:
        fake.script(Text("slow"), Text("fast", latency=0))
        async with aiohttp.ClientSession(fake.base_url + "/") as http:
            started = time.perf_counter()
            await (await http.post("chat/completions", json={"model": "m", "messages": []})).json()
            slow = time.perf_counter() - started
            started = time.perf_counter()
            await (await http.post("chat/completions", json={"model": "m", "messages": []})).json()
            fast = time.perf_counter() - started

    assert slow >= 0.05 > fast


async def test_hung_request_is_dropped_when_the_server_stops() -> None:
    fake = FakeLLM()
    await fake.start()
    fake.script(Hang())
    async with aiohttp.ClientSession() as http:
        pending = asyncio.create_task(http.post(fake.base_url + "/chat/completions", json={"messages": []}))
        await asyncio.wait_for(fake.wait_for_requests(1), 2)
        assert not pending.done()

        await asyncio.wait_for(fake.stop(), 2)

        with pytest.raises(aiohttp.ServerDisconnectedError):
            await pending


async def test_models_endpoint_lists_the_fake_model(fake_llm: FakeLLM) -> None:
    async with aiohttp.ClientSession() as http, http.get(fake_llm.base_url + "/models") as response:
        listing = await response.json()

    assert listing["data"] == [{"id": "fake-model", "object": "model", "owned_by": "fake"}]


def test_cli_prints_its_port_and_stops_on_sigterm() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.openai_server", "--latency", "0"],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline()
        assert line.startswith("PORT ")
        with socket.create_connection(("127.0.0.1", int(line.split()[1])), timeout=2) as conn:
            conn.sendall(b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert b"fake-model" in b"".join(iter(lambda: conn.recv(4096), b""))
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=5) == 0
    finally:
        process.kill()
        process.wait()
        process.stdout.close()


async def test_guard_refuses_connections_beyond_loopback() -> None:
    with pytest.raises(RuntimeError, match="beyond loopback"):
        await asyncio.open_connection("10.255.255.1", 80)
    with pytest.raises(RuntimeError, match="beyond loopback"):
        socket.create_connection(("10.255.255.1", 80), timeout=1)
    with socket.socket() as sock:
        sock.setblocking(False)
        with pytest.raises(RuntimeError, match="beyond loopback"):
            await asyncio.get_running_loop().sock_connect(sock, ("10.255.255.1", 80))
        with pytest.raises(RuntimeError, match="beyond loopback"):
            sock.connect_ex(("10.255.255.1", 80))


async def test_guard_refuses_public_hostnames() -> None:
    with pytest.raises(RuntimeError, match="example.com"):
        socket.getaddrinfo("example.com", 443)
    with pytest.raises(RuntimeError, match="example.com"):
        await asyncio.open_connection("example.com", 443)
    async with aiohttp.ClientSession() as http:
        with pytest.raises(RuntimeError, match="example.com"):
            await http.get("http://example.com/")


async def test_guard_lets_loopback_through(fake_llm: FakeLLM) -> None:
    for host in ("127.0.0.1", "localhost"):
        reader, writer = await asyncio.open_connection(host, fake_llm.port)
        writer.close()
        await writer.wait_closed()
    with socket.create_connection(("localhost", fake_llm.port), timeout=2):
        pass
    assert (await complete(fake_llm, "still works")).choices[0].message.content == "echo: still works"

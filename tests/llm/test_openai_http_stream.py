"""The direct path's stream: every event of one read parsed at once, as `json.loads` reads them, failures in place."""

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from aiohttp import web

from bot.llm.transports.openai_http import ErrorInAnswer, GarbledAnswer, OpenAICompatible
from tests.fakes.loopback import LoopbackSite

USER = [{"role": "user", "content": "hi"}]
Serve = Callable[[bytes], OpenAICompatible]


def event(payload: Any) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def chunk(delta: dict[str, Any] | None, finish_reason: str | None = None, **extra: Any) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish_reason}]
    return {"id": "c1", "object": "chat.completion.chunk", "choices": choices, **extra}


CHUNKS = [
    chunk({"role": "assistant", "content": ""}),
    chunk({"reasoning_content": "Ünïcode thoughts"}),
    chunk({"content": "text, then "}),
    chunk({"tool_calls": [{"index": 0, "id": "a", "type": "function", "function": {"name": "f", "arguments": "{"}}]}),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": "}"}}]}),
    chunk({}, "tool_calls"),
    chunk(None, usage={"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}),
]


@pytest.fixture
async def serve() -> AsyncIterator[Serve]:
    """A client of a server whose streamed answer is the given bytes, sent in one write."""
    body = [b""]

    async def answer(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(body[0])
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_post("/v1/chat/completions", answer)
    site = LoopbackSite(app)
    client = OpenAICompatible(f"http://127.0.0.1:{await site.start()}/v1")

    def answering(raw: bytes) -> OpenAICompatible:
        body[0] = raw
        return client

    yield answering
    await client.aclose()
    await site.stop()


async def read(client: OpenAICompatible) -> tuple[list[dict[str, Any]], Any]:
    """Every chunk, then None, or the failure that ended the stream; and the stream."""
    stream = await client.acompletion(model="openai/m", messages=USER, stream=True)
    chunks: list[Any] = []
    try:
        async for batch in stream.batches():
            chunks.extend(batch)
    except (ErrorInAnswer, GarbledAnswer) as exc:
        chunks.append(exc)
    else:
        chunks.append(None)
    return chunks, stream


async def test_every_event_of_one_read_is_read_as_json_loads_reads_it(serve: Serve) -> None:
    body = b"".join(event(c) for c in CHUNKS) + b"data: [DONE]\n\n" + event(chunk({"content": "after done"}))
    chunks, stream = await read(serve(body))
    assert chunks == [*CHUNKS, None]
    assert stream.received_finish_reason == "tool_calls"


async def test_events_that_are_not_one_tight_object_read_as_json_loads_reads_them(serve: Serve) -> None:
    spaced = b'data: {"choices": [{"delta": {"content": "x"}, "finish_reason": "stop"}]} \n\n'
    escaped = b'data: {"choices": [{"delta": {"\\u0063ontent": "\\u00fc"}}]}\n\n'
    chunks, stream = await read(serve(spaced + escaped + b"data: [DONE]\n\n"))
    assert chunks == [json.loads(spaced[6:]), json.loads(escaped[6:]), None]
    assert stream.received_finish_reason == "stop"


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        (b"data: <html>Bad Gateway</html>\n\n", "Bad Gateway"),
        (b"data: [1, 2]\n\n", "not a JSON object"),
        (b'data: {"a": 1}{"b": 2}\n\n', "not JSON"),
        (b'data: {"a": "\xff"}\n\n', "not JSON"),
    ],
)
async def test_a_garbled_event_fails_after_the_chunks_before_it(serve: Serve, bad: bytes, says: str) -> None:
    chunks, _ = await read(serve(event(CHUNKS[2]) + bad + event(CHUNKS[3])))
    assert chunks[:-1] == [CHUNKS[2]]
    assert isinstance(chunks[-1], GarbledAnswer) and says in str(chunks[-1])


async def test_an_error_event_fails_after_the_chunks_before_it(serve: Serve) -> None:
    error = {"error": {"message": "upstream overloaded", "code": 529}}
    chunks, _ = await read(serve(event(CHUNKS[2]) + event(error) + event(CHUNKS[3])))
    assert chunks[:-1] == [CHUNKS[2]]
    assert isinstance(chunks[-1], ErrorInAnswer) and chunks[-1].error == error["error"] and chunks[-1].mid_stream

"""A fake OpenAI-compatible Chat Completions server that speaks the real wire protocol."""

from __future__ import annotations

import argparse
import asyncio
import base64
import itertools
import json
import signal
import ssl
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from aiohttp import web
from multidict import CIMultiDict

from tests.fakes.embeddings import embed, encoded, words
from tests.fakes.openai_refusals import refusal

MODEL_ID = "fake-model"
# A 1x1 PNG: what the images endpoint draws unless a test sets another picture.
PNG_PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
_CHUNK_CHARS = 8

# status -> (canonical message, type, code), as the OpenAI API answers them.
_ERROR_KINDS: dict[int, tuple[str, str, str | None]] = {
    400: ("Invalid request", "invalid_request_error", None),
    401: ("Incorrect API key provided", "invalid_request_error", "invalid_api_key"),
    403: ("Forbidden", "invalid_request_error", None),
    404: ("The model does not exist", "invalid_request_error", "model_not_found"),
    413: ("Request body too large", "invalid_request_error", "request_too_large"),
    422: ("Unprocessable request", "invalid_request_error", None),
    429: ("Rate limit reached", "requests", "rate_limit_exceeded"),
}


@dataclass(frozen=True)
class Error:
    """An OpenAI-style error body; the default message becomes the real API's wording (401, 404, 429…).

    `headers` are sent along (e.g. Retry-After); `body` replaces the JSON error with raw text, as proxies answer;
    `code` replaces the API's code (OpenRouter puts the HTTP status there).
    """

    status: int
    message: str = "error"
    latency: float | None = None
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None
    param: str | None = None
    code: int | str | None = None


@dataclass(frozen=True, kw_only=True)
class Delivery:
    """How an answer is delivered: the pace of a stream, its finish reason, and where a stream breaks off.

    `chunk_chars` is how many characters of text or of one call's arguments a chunk carries (one SSE line each).
    `cut_after` counts the chunks after the first (role) chunk; then the stream ends its body without a
    finish reason or [DONE] (`cut="eof"`), drops the connection (`"drop"`), goes silent (`"stall"`), sends
    `error_event` as an error event and ends (`"error"`, as OpenRouter does), or sends a line that is not
    JSON and ends (`"garbage"`).
    """

    chunk_delay: float = 0.0
    chunk_chars: int = 8
    finish_reason: str | None = None
    cut_after: int | None = None
    cut: Literal["eof", "drop", "stall", "error", "garbage"] = "eof"
    error_event: Error | None = None


@dataclass(frozen=True)
class Text(Delivery):
    """A plain assistant reply; `reasoning` comes first, in the field `reasoning_field` (servers differ)."""

    content: str
    latency: float | None = None
    reasoning: str = ""
    reasoning_field: Literal["reasoning_content", "reasoning", "thinking"] = "reasoning_content"


@dataclass(frozen=True)
class ToolCalls(Delivery):
    """An assistant reply calling tools; a string argument is sent verbatim, even if broken JSON."""

    calls: tuple[tuple[str, dict | str], ...]
    content: str = ""
    latency: float | None = None


@dataclass(frozen=True)
class Hang:
    """No answer until the client disconnects or the server stops (then the connection drops)."""


@dataclass(frozen=True)
class Held:
    """`reply`, answered only once the test sets `release`: a call held open while the test acts."""

    reply: Text | ToolCalls | Error
    release: asyncio.Event


Reply = Text | ToolCalls | Error | Hang | Held


def echo(body: dict) -> Reply:
    """Answer with the text of the last user message, prefixed with 'echo: '."""
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            return Text("echo: " + _text_of(message.get("content")))
    return Text("echo: ")


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "") for part in content if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def _prompt_tokens(body: dict) -> int:
    return sum(len(_text_of(m.get("content"))) for m in body.get("messages") or [] if isinstance(m, dict)) // 4


def _pieces(text: str, size: int = _CHUNK_CHARS) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


class FakeLLM:
    """An aiohttp server on 127.0.0.1 answering /v1/chat/completions from a script, then `default`; also
    transcriptions, images and embeddings (`tests.fakes.embeddings`).

    It refuses what OpenAI refuses (`max_tokens` or a temperature but 1 for reasoning models, …), and with
    `refuse_streaming` (a status: 400 as OpenAI answers an unverified organisation, or 422) every streamed call.
    """

    def __init__(
        self,
        latency: float = 0.0,
        default: Callable[[dict], Reply] | None = None,
        context_length: int | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.latency = latency
        self._tls = tls  # serve HTTPS with this server context
        self.default = default or echo
        self.context_length = context_length  # reported in /v1/models when set, as vLLM-style servers do
        self.requests: list[dict] = []
        self.headers: list[CIMultiDict[str]] = []  # the HTTP headers of each chat request, names in any case
        self.authorizations: list[tuple[str, str | None]] = []  # every request's path and Authorization header
        self.models_status = 200  # another status makes /v1/models answer it, as servers without the list do
        self.required_key: str | None = None  # when set, any request without `Bearer <key>` is refused with 401
        self.refuse_streaming = 0
        self.disconnects = 0  # requests whose client closed the connection while the answer was still open
        self.transcript = "transcribed words"
        self.transcriptions: list[dict] = []  # what /v1/audio/transcriptions received
        self.image = PNG_PIXEL  # what /v1/images/generations draws (as b64_json)
        self.image_requests: list[dict] = []  # the JSON bodies /v1/images/generations received
        self.embedding_requests: list[dict] = []  # the JSON bodies /v1/embeddings received
        self.embedding_headers: list[CIMultiDict[str]] = []  # and their HTTP headers
        self.embedding_failure: Error | None = None  # when set, every embeddings request gets this answer
        self.same_words: dict[str, str] = {}  # synonyms for the embeddings (`tests.fakes.embeddings.embed`)
        self.speech = b"OggS fake opus voice"  # what /v1/audio/speech speaks
        self.speech_requests: list[dict] = []  # the JSON bodies /v1/audio/speech received
        self.speech_headers: list[CIMultiDict[str]] = []  # their HTTP headers (Authorization among them)
        self.reported: list[dict] = []  # the usage sent back with each answer that carried one
        self.cached_tokens = 0  # reported as usage.prompt_tokens_details.cached_tokens when set, as OpenAI does
        self._script: deque[Reply] = deque()
        self._ids = itertools.count(1)
        self._arrived = asyncio.Condition()
        self._stopping = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self._port = 0

    @property
    def port(self) -> int:
        """The bound TCP port (valid after start)."""
        return self._port

    @property
    def base_url(self) -> str:
        """The URL to pass as `api_base`."""
        return f"{'https' if self._tls else 'http'}://127.0.0.1:{self._port}/v1"

    def script(self, *replies: Reply) -> None:
        """Queue replies, consumed in order, one per chat request."""
        self._script.extend(replies)

    async def wait_for_requests(self, n: int) -> None:
        """Return once at least `n` chat requests have arrived."""
        async with self._arrived:
            await self._arrived.wait_for(lambda: len(self.requests) >= n)

    async def wait_for_disconnects(self, n: int) -> None:
        """Return once clients have closed the connection of at least `n` unfinished answers."""
        async with self._arrived:
            await self._arrived.wait_for(lambda: self.disconnects >= n)

    async def start(self, port: int = 0) -> None:
        """Bind 127.0.0.1 (port 0 picks a free one) and start serving."""
        app = web.Application(middlewares=[self._note_authorization])
        app.router.add_post("/v1/chat/completions", self._watched_chat)
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/v1/audio/transcriptions", self._transcribe)
        app.router.add_post("/v1/images/generations", self._generate_image)
        app.router.add_post("/v1/embeddings", self._embed)
        app.router.add_post("/v1/audio/speech", self._speak)
        self._stopping.clear()
        self._runner = web.AppRunner(app, access_log=None, handler_cancellation=True)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", port, ssl_context=self._tls).start()
        self._port = self._runner.addresses[0][1]

    async def stop(self) -> None:
        """Drop hung requests and stop serving."""
        self._stopping.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeLLM:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    @web.middleware
    async def _note_authorization(self, request: web.Request, handler: Any) -> web.StreamResponse:
        """Note each request's Authorization header; refuse it (401) when `required_key` is set and not sent."""
        self.authorizations.append((request.path, request.headers.get("Authorization")))
        if self.required_key and request.headers.get("Authorization") != f"Bearer {self.required_key}":
            return _error_response(Error(401))
        response: web.StreamResponse = await handler(request)
        return response

    async def _transcribe(self, request: web.Request) -> web.Response:
        """Speech to text: multipart `file` and `model`; answers `{"text": self.transcript}`."""
        form = await request.post()
        upload = form.get("file")
        if not isinstance(upload, web.FileField) or not form.get("model"):
            return _error_response(Error(400, "file and model are required"))
        self.transcriptions.append({"model": form["model"], "filename": upload.filename, "bytes": upload.file.read()})
        return web.json_response({"text": self.transcript})

    async def _generate_image(self, request: web.Request) -> web.Response:
        """Images: a JSON body with `model` and `prompt`; answers one picture as `b64_json`, as OpenAI does."""
        body = await request.json()
        if not body.get("prompt") or not body.get("model"):
            return _error_response(Error(400, "model and prompt are required"))
        self.image_requests.append(body)
        picture = {"b64_json": base64.b64encode(self.image).decode(), "revised_prompt": body["prompt"]}
        return web.json_response({"created": int(time.time()), "data": [picture]})

    async def _embed(self, request: web.Request) -> web.Response:
        """Embeddings: `model` and `input` (a string or a list of them); one hashed bag-of-words vector per input."""
        body = await request.json()
        texts = [body["input"]] if isinstance(body.get("input"), str) else body.get("input")
        if not body.get("model") or not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return _error_response(Error(400, "model and input (a string or a list of strings) are required"))
        self.embedding_requests.append(body)
        self.embedding_headers.append(CIMultiDict(request.headers))
        if self.embedding_failure is not None:
            return _error_response(self.embedding_failure)
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": encoded(embed(text, self.same_words), body.get("encoding_format")),
            }
            for i, text in enumerate(texts)
        ]
        tokens = sum(max(1, len(words(text))) for text in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return web.json_response({"object": "list", "data": data, "model": body["model"], "usage": usage})

    async def _speak(self, request: web.Request) -> web.Response:
        """Text to speech: a JSON body with `model`, `input` and `voice`; answers `self.speech` as audio bytes."""
        body = await request.json()
        if not body.get("model") or not body.get("input") or not body.get("voice"):
            return _error_response(Error(400, "model, input and voice are required"))
        self.speech_requests.append(body)
        self.speech_headers.append(CIMultiDict(request.headers))
        kind = {"opus": "audio/ogg", "mp3": "audio/mpeg", "wav": "audio/wav"}.get(
            body.get("response_format"), "audio/mpeg"
        )
        return web.Response(body=self.speech, content_type=kind)

    async def _models(self, request: web.Request) -> web.Response:
        if self.models_status != 200:
            return web.json_response({"detail": "Not Found"}, status=self.models_status)
        model: dict[str, Any] = {"id": MODEL_ID, "object": "model", "owned_by": "fake"}
        if self.context_length is not None:
            model["context_length"] = self.context_length
        return web.json_response({"object": "list", "data": [model]})

    async def _watched_chat(self, request: web.Request) -> web.StreamResponse:
        """`_chat`, counting the answers cut short by the client closing its connection (aiohttp cancels them)."""
        try:
            return await self._chat(request)
        except asyncio.CancelledError:
            if not self._stopping.is_set():
                self.disconnects += 1
                async with self._arrived:
                    self._arrived.notify_all()
            raise

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except ValueError:
            return _error_response(Error(400, "We could not parse the JSON body of your request."))
        self.requests.append(body)
        self.headers.append(CIMultiDict(request.headers))
        async with self._arrived:
            self._arrived.notify_all()
        if refused := refusal(body, self.refuse_streaming):
            status, message, param, code = refused
            return _error_response(Error(status, message, param=param, code=code))
        reply = self._script.popleft() if self._script else self.default(body)
        if isinstance(reply, Held):
            await reply.release.wait()
            reply = reply.reply

        if isinstance(reply, Hang):
            await self._stopping.wait()
            if request.transport is not None:
                request.transport.abort()  # drop the connection: a hung request never gets an answer
            return web.Response(status=503)
        latency = self.latency if reply.latency is None else reply.latency
        if latency > 0:
            await asyncio.sleep(latency)
        if isinstance(reply, Error):
            return _error_response(reply)
        calls = self._tool_calls(reply)
        usage = _usage(body, reply, calls, self.cached_tokens)
        if not body.get("stream") or (body.get("stream_options") or {}).get("include_usage"):
            self.reported.append(usage)
        if body.get("stream"):
            return await self._stream(request, body, reply, calls, usage)
        return web.json_response(self._completion(body, reply, calls, usage))

    def _tool_calls(self, reply: Text | ToolCalls) -> list[dict]:
        if isinstance(reply, Text):
            return []
        return [
            {
                "id": f"call_{next(self._ids)}",
                "type": "function",
                "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
            }
            for name, args in reply.calls
        ]

    def _completion(self, body: dict, reply: Text | ToolCalls, calls: list[dict], usage: dict) -> dict:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content or (None if calls else "")}
        if isinstance(reply, Text) and reply.reasoning:
            message[reply.reasoning_field] = reply.reasoning
        if calls:
            message["tool_calls"] = calls
        return {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", MODEL_ID),
            "choices": [{"index": 0, "message": message, "finish_reason": _finish_reason(reply, calls)}],
            "usage": usage,
        }

    async def _stream(
        self, request: web.Request, body: dict, reply: Text | ToolCalls, calls: list[dict], usage: dict
    ) -> web.StreamResponse:
        head = {"id": f"chatcmpl-{next(self._ids)}", "object": "chat.completion.chunk", "created": int(time.time())}
        head["model"] = body.get("model", MODEL_ID)
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await response.prepare(request)
        events = list(_sse_events(head, reply, calls, usage if include_usage else None))
        if reply.cut_after is not None:
            events = events[: reply.cut_after + 1] + _cut_events(reply)
        if reply.chunk_delay > 0:
            for index, event in enumerate(events):
                if index:
                    await asyncio.sleep(reply.chunk_delay)
                await response.write(event)
        else:
            # One write for all events keeps the fake cheap; clients parse SSE the same either way.
            await response.write(b"".join(events))
        if reply.cut_after is not None and reply.cut in ("drop", "stall"):
            if reply.cut == "stall":
                await self._stopping.wait()
            if request.transport is not None:
                request.transport.abort()
            return response
        await response.write_eof()
        return response


def _sse_events(head: dict, reply: Text | ToolCalls, calls: list[dict], usage: dict | None) -> Iterator[bytes]:
    def event(delta: dict | None, finish_reason: str | None = None, **extra: Any) -> bytes:
        choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish_reason}]
        return b"data: " + json.dumps({**head, "choices": choices, **extra}).encode() + b"\n\n"

    yield event({"role": "assistant", "content": ""})
    if isinstance(reply, Text):
        for piece in _pieces(reply.reasoning):
            yield event({reply.reasoning_field: piece})
    for piece in _pieces(reply.content, reply.chunk_chars):
        yield event({"content": piece})
    for index, call in enumerate(calls):
        first, *rest = _pieces(call["function"]["arguments"], reply.chunk_chars) or [""]
        function = {"name": call["function"]["name"], "arguments": first}
        yield event({"tool_calls": [{"index": index, "id": call["id"], "type": "function", "function": function}]})
        for piece in rest:
            yield event({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield event({}, _finish_reason(reply, calls))
    if usage is not None:
        yield event(None, usage=usage)
    yield b"data: [DONE]\n\n"


def _cut_events(reply: Delivery) -> list[bytes]:
    """What a stream sends where it is cut: an error event, a line that is not JSON, or nothing."""
    if reply.cut == "error":
        return [b"data: " + json.dumps(_error_payload(reply.error_event or Error(500))).encode() + b"\n\n"]
    if reply.cut == "garbage":
        return [b'data: {"choices": [{"delta": <html>Bad Gateway</html>\n\n']
    return []


def _finish_reason(reply: Text | ToolCalls, calls: list[dict]) -> str:
    return reply.finish_reason or ("tool_calls" if calls else "stop")


def _usage(body: dict, reply: Text | ToolCalls, calls: list[dict], cached: int = 0) -> dict:
    prompt = _prompt_tokens(body)
    completion = max(1, (len(reply.content) + sum(len(c["function"]["arguments"]) for c in calls)) // 4)
    total = prompt + completion
    usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": total}
    if cached:
        usage["prompt_tokens_details"] = {"cached_tokens": min(cached, prompt)}
    return usage


def _error_payload(error: Error) -> dict:
    """The OpenAI-style error object for `error`, in the real API's wording unless a message is given."""
    message, kind, code = _ERROR_KINDS.get(error.status, ("The server had an error", "server_error", None))
    if error.message != "error":
        message = error.message
    code = code if error.code is None else error.code
    return {"error": {"message": message, "type": kind, "param": error.param, "code": code}}


def _error_response(error: Error) -> web.Response:
    if error.body is not None:
        return web.Response(text=error.body, status=error.status, headers=error.headers)
    return web.json_response(_error_payload(error), status=error.status, headers=error.headers)


async def _serve(latency: float, port: int) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    fake = FakeLLM(latency=latency)
    await fake.start(port)
    try:
        print(f"PORT {fake.port}", flush=True)
        await stop.wait()
    finally:
        await fake.stop()


def main(argv: list[str] | None = None) -> None:
    """Run the fake in its own process: prints `PORT <n>` once, serves until SIGTERM/SIGINT."""
    parser = argparse.ArgumentParser(prog="python -m tests.fakes.openai_server", description=main.__doc__)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds to wait before each answer")
    parser.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0 picks a free one)")
    args = parser.parse_args(argv)
    asyncio.run(_serve(args.latency, args.port))


if __name__ == "__main__":
    main()

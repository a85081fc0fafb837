"""A direct path to OpenAI-compatible endpoints: the body litellm would send, over one pooled aiohttp session.

litellm spends most of a call in the OpenAI SDK's request transform, per-call cost and model-info
lookups and its logging callbacks. For `openai/…` models only its parameter mapping per model family
changes the request, and `bot.llm.model_params` mirrors it, so the provider sends the same JSON body
itself and reads the answer into objects litellm's shape, which `ModelProvider` parses unchanged;
`failure_evidence` reads its failures (a status, headers, the URL) for `bot.llm.failures.classify`,
so retries and errors follow the same rules. Every other provider still goes through litellm.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import os
from collections.abc import AsyncIterator, Callable
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from bot.config.schema import LLMConfig
from bot.llm.failures import (
    Evidence,
    answer_error_evidence,
    exception_chain,
    kind_without_status,
    request_address,
    retry_after,
    says_overflow,
    socket_failure,
)
from bot.llm.keys import environment_allowed
from bot.llm.model_params import openai_body, request_headers
from bot.llm.sse import EventReader
from bot.llm.transports import openai_endpoint
from bot.llm.transports.wire_json import BodyEncoder
from bot.net.proxy import proxy_for
from bot.net.tls import client_context

if TYPE_CHECKING:
    import aiohttp

logger = logging.getLogger(__name__)

PREFIX = "openai/"
KEY_VARIABLE = "OPENAI_API_KEY"
# The keys of litellm's request that are part of the wire body; the rest steer litellm itself.
DONE_GRACE = 5.0  # seconds the end of a streamed body may take after its [DONE] before the connection is closed
_BODY_KEYS = ("messages", "max_tokens", "temperature", "reasoning_effort", "tools", "stream", "stream_options")


# json's own scanner (set by `JSONDecoder.__init__`, so typeshed does not declare it): the value at an index and
# where it ends; `json.loads` is it plus a bytes decode and checks, costly per event.
_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


class HTTPFailure(Exception):
    """The endpoint answered with an error status; `overflow` when its message says the context window was exceeded."""

    def __init__(self, status: int, message: str, headers: Any, url: Any) -> None:
        super().__init__(f"HTTP {status}: {message[:300]}")
        self.status_code = status
        self.response = SimpleNamespace(headers=headers)
        self.request = SimpleNamespace(url=url)
        self.overflow = says_overflow(message)


class ConnectionLost(ConnectionError):
    """The connection failed or broke off without an HTTP status (the cause is chained); `request.url` is where."""

    def __init__(self, message: str, url: Any) -> None:
        super().__init__(message)
        self.request = SimpleNamespace(url=url)


class ErrorInAnswer(Exception):
    """A 200 answer carried an error object: its body, or an event mid-stream (`mid_stream`)."""

    def __init__(self, error: Any, mid_stream: bool) -> None:
        super().__init__(f"error in a 200 answer{' mid-stream' if mid_stream else ''}: {_error_text(error)[:300]}")
        self.error = error
        self.mid_stream = mid_stream


class GarbledAnswer(ValueError):
    """The answer was not the JSON it should be (a proxy's page, a broken line); worth another try."""


class Wire(dict):  # type: ignore[type-arg]
    """A JSON object read by attribute, None where a key is absent, as litellm's response objects read."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        return self.get(name)


def failure_evidence(exc: BaseException) -> Evidence:
    """What a failed call on this path (or the provider around it) tells the classifier; litellm is never loaded."""
    chain = exception_chain(exc)
    if reason := socket_failure(chain):
        return Evidence(unreachable=reason, address=request_address(chain))
    if answered := next((error for error in chain if isinstance(error, ErrorInAnswer)), None):
        return answer_error_evidence(answered.error, answered.mid_stream)
    if any(isinstance(error, GarbledAnswer) for error in chain):
        return Evidence(kind="transient")
    failure = next((error for error in chain if isinstance(error, HTTPFailure)), None)
    if failure is None:
        return Evidence(kind=kind_without_status(exc) or "unknown")
    headers = [failure.response.headers] if failure.response.headers else []
    return Evidence(status=failure.status_code, retry_after=retry_after(headers), overflow=failure.overflow)


def fast_path_for(config: LLMConfig) -> OpenAICompatible | None:
    """The direct client for an `openai/…` model when `llm.fast_path` is on, else None (use litellm)."""
    if not config.fast_path or not config.model.startswith(PREFIX):
        return None
    return OpenAICompatible(openai_endpoint.base_url(config))


def openai_key(config: LLMConfig) -> tuple[str | None, list[str]]:
    """The key to send and the variables to name when none is set: `llm.api_key`, else `OPENAI_API_KEY` where
    `bot.llm.keys` allows it; to any other `api_base` nothing (no Authorization header)."""
    if key := config.api_key.get_secret_value():
        return key, []
    if not environment_allowed(config.model, config.api_base):
        return None, []
    if key := os.environ.get(KEY_VARIABLE, ""):
        return key, []
    return None, [KEY_VARIABLE]


def wire_body(request: dict[str, Any]) -> dict[str, Any]:
    """The JSON body litellm sends for a request: its wire keys mapped for the model, without the `openai/` prefix."""
    body = {key: request[key] for key in _BODY_KEYS if key in request}
    body["model"] = request["model"].removeprefix(PREFIX)
    if "messages" in body:
        # litellm leaves out keys whose value is None (an assistant's `content` beside its tool calls).
        body["messages"] = [
            {k: v for k, v in m.items() if v is not None} if None in m.values() else m for m in body["messages"]
        ]
    return openai_body(body)


def error_message(text: str) -> str:
    """The message of an OpenAI-style error body, or the body itself."""
    try:
        payload = json.loads(text)
    except ValueError:
        return " ".join(text.split()) or "no error message"
    error = payload.get("error") if isinstance(payload, dict) else None
    return _error_text(error or payload)


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        return " ".join(f"{error.get('message') or ''} {error.get('code') or ''}".split())
    return " ".join(str(error).split())


def read_answer(raw: bytes) -> Wire:
    """A completion read from a 200 body: `ErrorInAnswer` when it carries an error, `GarbledAnswer` when not JSON."""
    answer = _json_object(raw, "the answer")
    if answer.get("error"):
        raise ErrorInAnswer(answer["error"], mid_stream=False)
    return answer


def _json_object(raw: bytes, what: str, hook: Any = Wire) -> Any:
    """The JSON object in `raw`, its objects made by `hook` (`Wire`, or plain dicts with None)."""
    try:
        value = json.loads(raw, object_hook=hook)
    except ValueError as exc:
        raise GarbledAnswer(f"{what} is not JSON: {raw[:200]!r}") from exc
    if not isinstance(value, dict):
        raise GarbledAnswer(f"{what} is not a JSON object: {raw[:200]!r}")
    return value


class SSEStream:
    """Chunks (plain dicts) of a server-sent-events answer until `[DONE]`; `received_finish_reason` as litellm's
    stream has it.

    Every failure is one of this module's errors. The response is released as soon as iteration ends; after
    `[DONE]` the connection goes back to the pool once the body's end arrives (given `DONE_GRACE` to come).
    """

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response
        self.received_finish_reason: str | None = None

    async def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        async for batch in self.batches():
            for chunk in batch:
                yield chunk

    async def batches(self) -> AsyncIterator[list[dict[str, Any]]]:
        """The chunks as they arrive, a list of those that came in one read; a bad event is raised after the
        chunks before it."""
        import aiohttp

        reader = EventReader()
        done = False
        try:
            # Read as it arrives, not by aiohttp's lines: a line may exceed its limit (a 1 MB tool argument).
            async for piece in self._response.content.iter_any():
                batch, done, failure = self._read(reader.feed(piece))
                if batch:
                    yield batch
                if failure is not None:
                    raise failure
                if done:
                    return
            batch, _, failure = self._read(reader.end())
            if batch:
                yield batch
            if failure is not None:
                raise failure
        except aiohttp.ClientError as exc:
            raise ConnectionLost(f"stream broke off: {type(exc).__name__}: {exc}", self._response.url) from exc
        finally:
            self._finish(done)

    def _read(self, events: list[bytes]) -> tuple[list[dict[str, Any]], bool, Exception | None]:
        """The chunks of these events up to `[DONE]`, whether it came, and the failure of a bad event (after which
        nothing is read).

        An event whose text is one JSON object from end to end (all of them, from a sound server) is scanned
        in place; any other is read again by `_json_object`, which says why it is garbled.
        """
        batch: list[dict[str, Any]] = []
        for data in events:
            if data.startswith(b"[DONE]"):
                return batch, True, None
            try:
                text = data.decode()
                chunk, end = _scan(text, 0)
                if end != len(text) or type(chunk) is not dict:
                    raise ValueError(end)
            except (ValueError, StopIteration):
                try:
                    chunk = _json_object(data, "a stream event", None)
                except GarbledAnswer as exc:
                    return batch, False, exc
            if chunk.get("error"):
                return batch, False, ErrorInAnswer(chunk["error"], mid_stream=True)
            if choices := chunk.get("choices"):
                for choice in choices:
                    self.received_finish_reason = choice.get("finish_reason") or self.received_finish_reason
            batch.append(chunk)
        return batch, False, None

    def _finish(self, done: bool) -> None:
        """Release the response; after `[DONE]` with the body's end still on its way, let aiohttp release it
        to the pool when it comes (releasing now would close the connection), and close it if it does not."""
        response = self._response
        if not done or response.content.is_eof():
            response.release()
            return
        guard = asyncio.get_running_loop().call_later(DONE_GRACE, response.close)
        response.content.on_eof(guard.cancel)


class OpenAICompatible:
    """POSTs chat completions to one base URL; `acompletion` mirrors litellm's call and result shapes."""

    def __init__(self, base_url: str) -> None:
        import yarl

        self._url = base_url.rstrip("/") + "/chat/completions"
        self._target = yarl.URL(self._url)
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._encoder = BodyEncoder()
        self._proxy: str | None = None

    async def warm_up(self) -> None:
        """Import aiohttp (a fifth of a second, two TLS contexts) in a thread, before the first call needs it."""
        await asyncio.to_thread(importlib.import_module, "aiohttp")

    async def acompletion(self, **request: Any) -> Any:
        """A completion (`Wire`), or with `stream=True` an `SSEStream` of chunks."""
        import aiohttp

        session = self._http()
        headers = request_headers(request)
        data = self._encoder.encode(wire_body(request))
        try:
            response = await session.post(self._url, data=data, headers=headers, proxy=self._proxy)
        except aiohttp.ClientError as exc:
            raise ConnectionLost(f"{type(exc).__name__}: {exc}", self._target) from exc
        streaming = False
        try:
            if response.status >= 400:
                text = await response.text(errors="replace")
                raise HTTPFailure(response.status, error_message(text), response.headers, response.url)
            if request.get("stream"):
                streaming = True
                return SSEStream(response)
            return read_answer(await response.read())
        except aiohttp.ClientError as exc:
            raise ConnectionLost(f"{type(exc).__name__}: {exc}", self._target) from exc
        finally:
            if not streaming:
                response.release()

    def _http(self) -> aiohttp.ClientSession:
        """The pooled session of the running event loop, made on first use."""
        import aiohttp

        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._loop is not loop:
            # The process's CA bundle, and HTTP(S)_PROXY / NO_PROXY from the environment, as httpx reads them.
            connector = aiohttp.TCPConnector(limit=0, ttl_dns_cache=300, ssl=client_context())
            self._session = aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=None))
            self._proxy = proxy_for(self._url)
            self._loop = loop
        return self._session

    async def aclose(self) -> None:
        """Close the pooled connections."""
        if self._session is not None and not self._session.closed and self._loop is asyncio.get_running_loop():
            await self._session.close()
        self._session = None

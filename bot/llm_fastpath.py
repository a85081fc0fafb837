"""A direct path to OpenAI-compatible endpoints: the body litellm would send, over one pooled aiohttp session.

litellm spends most of a call in the OpenAI SDK's request transform, per-call cost and model-info
lookups and its logging callbacks. For `openai/…` models none of that changes the request, so the
provider sends the same JSON body itself and reads the answer into objects litellm's shape, which
`LiteLLMProvider` parses unchanged. Every other provider still goes through litellm.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from bot.config import LLMConfig
from bot.errors import ContextOverflow, ModelNotFound, ProviderAuthError, ProviderError, ProviderUnavailable

logger = logging.getLogger(__name__)

PREFIX = "openai/"
DEFAULT_BASE = "https://api.openai.com/v1"
# The keys of litellm's request that are part of the wire body; the rest steer litellm itself.
_BODY_KEYS = ("messages", "max_tokens", "temperature", "tools", "stream", "stream_options")
_TRANSIENT_STATUS = frozenset({408, 409, 429})
# litellm's markers of a context-window error (exception_mapping_utils), lower-cased.
_OVERFLOW_MARKERS = (
    "context_length_exceeded",
    "exceed context limit",
    "this model's maximum context length is",
    "model's maximum context limit",
    "is longer than the model's context length",
    "input tokens exceed the configured limit",
    "exceeds the available context size",
    "exceeds the maximum number of tokens allowed",
    "prompt is too long",
)


class TransientProviderError(ProviderUnavailable):
    """A failure worth retrying (408, 409, 429, 5xx, a dropped connection); `retry_after` when the server said."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Wire(dict):  # type: ignore[type-arg]
    """A JSON object read by attribute, None where a key is absent, as litellm's response objects read."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        return self.get(name)


def fast_path_for(config: LLMConfig) -> OpenAICompatible | None:
    """The direct client for an `openai/…` model when `llm.fast_path` is on, else None (use litellm)."""
    if not config.fast_path or not config.model.startswith(PREFIX):
        return None
    return OpenAICompatible(config.api_base or DEFAULT_BASE, config.api_key.get_secret_value())


def wire_body(request: dict[str, Any]) -> dict[str, Any]:
    """The JSON body litellm sends for a request: its wire keys, the model without the `openai/` prefix."""
    body = {key: request[key] for key in _BODY_KEYS if key in request}
    body["model"] = request["model"].removeprefix(PREFIX)
    if "messages" in body:
        # litellm leaves out keys whose value is None (an assistant's `content` beside its tool calls).
        body["messages"] = [
            {k: v for k, v in m.items() if v is not None} if None in m.values() else m for m in body["messages"]
        ]
    return body


def error_for(status: int, text: str, retry_after: str | None) -> ProviderError:
    """Map an HTTP error answer onto our error tree as litellm would classify it."""
    message = _error_message(text)
    described = f"HTTP {status}: {message[:300]}"
    if status in _TRANSIENT_STATUS or status >= 500:
        return TransientProviderError(described, _seconds(retry_after))
    if status in (401, 403):
        return ProviderAuthError(described)
    if status == 404:
        return ModelNotFound(described)
    lowered = message.lower()
    if status in (400, 413, 422) and any(marker in lowered for marker in _OVERFLOW_MARKERS):
        return ContextOverflow(described)
    return ProviderError(described)


def _error_message(text: str) -> str:
    try:
        payload = json.loads(text)
    except ValueError:
        return " ".join(text.split()) or "no error message"
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, dict):
        return " ".join(f"{error.get('message') or ''} {error.get('code') or ''}".split())
    return " ".join(str(error or payload).split())


def _seconds(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None


class OpenAICompatible:
    """POSTs chat completions to one base URL; `acompletion` mirrors litellm's call and result shapes."""

    def __init__(self, base_url: str, api_key: str) -> None:
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._headers = {"Content-Type": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._session: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def acompletion(self, **request: Any) -> Any:
        """A completion (`Wire`), or with `stream=True` an async iterator of chunks (`Wire`)."""
        import aiohttp

        session = self._http()
        data = json.dumps(wire_body(request), ensure_ascii=False, separators=(",", ":")).encode()
        try:
            response = await session.post(self._url, data=data, headers=self._headers)
        except aiohttp.ClientError as exc:
            raise TransientProviderError(f"{type(exc).__name__}: {exc}") from exc
        try:
            if response.status >= 400:
                text = await response.text(errors="replace")
                error = error_for(response.status, text, response.headers.get("Retry-After"))
                if not isinstance(error, TransientProviderError):
                    logger.error("llm call failed for model %s: %s", request["model"], error)
                raise error
            if request.get("stream"):
                return self._chunks(response)
            return json.loads(await response.read(), object_hook=Wire)
        except aiohttp.ClientError as exc:
            response.release()
            raise TransientProviderError(f"{type(exc).__name__}: {exc}") from exc
        except BaseException:
            response.release()
            raise
        finally:
            if not request.get("stream"):
                response.release()

    async def _chunks(self, response: Any) -> AsyncIterator[Wire]:
        """Server-sent events until `[DONE]`; a dropped connection or an error event raises."""
        import aiohttp

        try:
            async for raw in response.content:
                line = raw.strip()
                if not line.startswith(b"data:"):
                    continue
                data = line[5:].strip()
                if data == b"[DONE]":
                    return
                chunk = json.loads(data, object_hook=Wire)
                if chunk.get("error"):
                    raise error_for(500, data.decode(errors="replace"), None)
                yield chunk
        except aiohttp.ClientError as exc:
            raise TransientProviderError(f"stream broke off: {type(exc).__name__}: {exc}") from exc
        finally:
            response.release()

    def _http(self) -> Any:
        """The pooled session of the running event loop, made on first use."""
        import aiohttp

        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._loop is not loop:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300), timeout=aiohttp.ClientTimeout(total=None)
            )
            self._loop = loop
        return self._session

    async def aclose(self) -> None:
        """Close the pooled connections."""
        if self._session is not None and not self._session.closed and self._loop is asyncio.get_running_loop():
            await self._session.close()
        self._session = None

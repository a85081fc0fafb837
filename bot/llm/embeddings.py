"""Embedding models: texts to vectors through litellm, or straight to an OpenAI-compatible `/v1/embeddings`.

With `api_base` set the request goes out directly, carrying `api_key` only when the config names one: an
environment key (OPENAI_API_KEY …) is never sent to a server the config chose. Without it, litellm resolves
the provider, its host and its key as for any hosted model.
"""

from __future__ import annotations

import asyncio
import base64
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from bot.config.schema_embeddings import EmbeddingsConfig
from bot.errors import ProviderError
from bot.llm.prices import call_cost
from bot.llm.transports.litellm_loader import import_litellm
from bot.net.proxy import proxy_for
from bot.net.tls import client_context


@dataclass(frozen=True, slots=True)
class Embedded:
    """One vector per text (same order), the tokens the provider counted, and the price (None when unknown)."""

    vectors: list[list[float]]
    tokens: int
    cost: float | None


class Embedder(Protocol):
    """Anything that turns texts into vectors with one model (metered by `bot.usage.metered_embeddings`)."""

    model: str

    async def embed(self, texts: Sequence[str]) -> Embedded: ...


class EmbeddingModel:
    """`memory.embeddings`' model; failures of either path are a ProviderError naming what went wrong."""

    def __init__(self, config: EmbeddingsConfig) -> None:
        self.model = config.model
        self._api_base = config.api_base.rstrip("/") if config.api_base else None
        self._api_key = config.api_key.get_secret_value()
        self._timeout = config.timeout

    async def embed(self, texts: Sequence[str]) -> Embedded:
        """The vectors of `texts`, in order."""
        if not texts:
            return Embedded([], 0, 0.0)
        try:
            if self._api_base is not None:
                return await asyncio.wait_for(self._direct(list(texts), self._api_base), self._timeout)
            return await self._litellm(list(texts))
        except ProviderError:
            raise
        except Exception as exc:  # litellm and aiohttp raise many kinds; one error for the caller
            raise ProviderError(f"embedding with {self.model} failed: {type(exc).__name__}: {exc}") from exc

    async def _direct(self, texts: list[str], base: str) -> Embedded:
        import aiohttp  # a fifth of a second; only configured embeddings need it

        url = f"{base}/embeddings"
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        name = self.model.removeprefix("openai/")
        body = {"model": name, "input": texts, "encoding_format": "float"}
        connector = aiohttp.TCPConnector(ssl=client_context())
        async with (
            aiohttp.ClientSession(connector=connector) as session,
            session.post(url, json=body, headers=headers, proxy=proxy_for(url)) as response,
        ):
            if response.status >= 400:
                text = (await response.text(errors="replace"))[:300]
                raise ProviderError(f"embedding with {self.model} failed: {url} answered {response.status}: {text}")
            answer = await response.json(content_type=None)
        vectors = vectors_of(answer.get("data"), len(texts))
        tokens = int((answer.get("usage") or {}).get("prompt_tokens") or 0)
        return Embedded(vectors, tokens, call_cost(self.model, tokens, 0, 0))

    async def _litellm(self, texts: list[str]) -> Embedded:
        litellm = await asyncio.to_thread(import_litellm)  # seconds the first time: never on the event loop
        options: dict[str, Any] = {"model": self.model, "input": texts, "timeout": self._timeout}
        if self._api_key:
            options["api_key"] = self._api_key
        response = await litellm.aembedding(**options)
        data = [item if isinstance(item, dict) else dict(item) for item in response.data]
        usage = getattr(response, "usage", None)
        tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        cost = (getattr(response, "_hidden_params", None) or {}).get("response_cost")
        return Embedded(vectors_of(data, len(texts)), tokens, float(cost) if cost is not None else None)


def vectors_of(data: Any, count: int) -> list[list[float]]:
    """The vectors of an OpenAI embeddings answer's `data`, ordered by `index` (floats or base64 float32)."""
    if not isinstance(data, list) or len(data) != count:
        held = len(data) if isinstance(data, list) else 0
        raise ProviderError(f"the embeddings answer holds {held} vectors, not {count}")
    ordered = sorted(data, key=lambda item: item.get("index", 0))
    vectors = []
    for item in ordered:
        raw = item.get("embedding")
        if isinstance(raw, str):
            packed = base64.b64decode(raw)
            raw = list(struct.unpack(f"<{len(packed) // 4}f", packed))
        if not isinstance(raw, list) or not raw:
            raise ProviderError("the embeddings answer has an item without a vector")
        vectors.append([float(value) for value in raw])
    return vectors

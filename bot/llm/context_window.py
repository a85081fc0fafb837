"""The model's context window in tokens: configured, else discovered from the server or litellm's table."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from bot.config.schema import LLMConfig
from bot.llm.prices import model_record
from bot.llm.transports.openai_endpoint import server_base
from bot.llm.transports.openai_http import openai_key

logger = logging.getLogger(__name__)

DEFAULT_WINDOW = 8192
CACHE_SECONDS = 300.0
MODELS_TIMEOUT = 5.0
# Where OpenAI-compatible servers report a model's context length in /v1/models
# (OpenRouter and others, vLLM, LM Studio); llama.cpp nests it under "meta".
_LENGTH_KEYS = ("context_length", "max_model_len", "context_window", "max_context_length")

ModelInfo = Callable[[str], Mapping[str, Any]]


def litellm_model_info(model: str) -> Mapping[str, Any]:
    """litellm's record of a model, read from its table without importing it (KeyError when unknown)."""
    record = model_record(model)
    if record is None:
        raise KeyError(model)
    return {"max_input_tokens": record.max_input_tokens, "max_tokens": record.max_tokens}


def context_length_in(payload: Any, model: str) -> int | None:
    """The context length a `/v1/models` answer reports for `model`, if any."""
    entries = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(entries, list):
        return None
    name = model.split("/", 1)[-1]
    matching = [e for e in entries if isinstance(e, dict) and e.get("id") in (model, name)]
    if not matching and len(entries) == 1 and isinstance(entries[0], dict):
        matching = entries
    for entry in matching:
        meta = entry.get("meta")
        if not isinstance(meta, dict):
            meta = {}
        for value in (*(entry.get(key) for key in _LENGTH_KEYS), meta.get("n_ctx_train")):
            if isinstance(value, int) and value > 0:
                return value
    return None


class ContextWindow:
    """The model's window in tokens: config, else the server's /v1/models (when api_base is set) or litellm's
    model data, else 8192; cached 5 min."""

    def __init__(
        self,
        config: LLMConfig,
        clock: Callable[[], float] = time.monotonic,
        model_info: ModelInfo = litellm_model_info,
    ) -> None:
        self._config = config
        self._clock = clock
        self._model_info = model_info
        self._cached: tuple[int | None, float] | None = None
        self._lock = asyncio.Lock()

    async def size(self) -> int:
        """The window size, discovered at most once per cache period; 8192 when nothing says it."""
        return await self.measured() or DEFAULT_WINDOW

    async def measured(self) -> int | None:
        """The window the config, the server or litellm's data gives, discovered at most once per cache period;
        None when none of them says it."""
        if self._config.context_window:
            return self._config.context_window
        if self._cached is not None and self._clock() < self._cached[1]:
            return self._cached[0]
        async with self._lock:
            if self._cached is None or self._clock() >= self._cached[1]:
                self._cached = (await self._discover(), self._clock() + CACHE_SECONDS)
            return self._cached[0]

    @property
    def configured(self) -> bool:
        """Whether the size is `llm.context_window`'s rather than discovered or assumed."""
        return bool(self._config.context_window)

    def forget(self) -> None:
        """Discover again on the next call."""
        self._cached = None

    def last_known(self) -> int:
        """The size without discovering: configured, else the last discovered, else the default."""
        if self._config.context_window:
            return self._config.context_window
        return (self._cached[0] if self._cached else None) or DEFAULT_WINDOW

    async def _discover(self) -> int | None:
        model = self._config.model
        # A server at api_base knows what it actually loaded; litellm only knows public model names.
        if server_base(self._config):
            size = await self._from_models_endpoint() or await asyncio.to_thread(self._from_litellm)
        else:
            size = await asyncio.to_thread(self._from_litellm)
        if size is None:
            logger.info("context window of %s unknown; assuming %d (set llm.context_window)", model, DEFAULT_WINDOW)
            return None
        logger.info("context window of %s: %d tokens", model, size)
        return size

    def _from_litellm(self) -> int | None:
        try:
            info = self._model_info(self._config.model)
        except Exception as exc:  # litellm raises assorted errors for models it has not mapped
            logger.debug("litellm has no model info for %s: %s", self._config.model, exc)
            return None
        size = info.get("max_input_tokens") or info.get("max_tokens")
        return size if isinstance(size, int) and size > 0 else None

    async def _from_models_endpoint(self) -> int | None:
        base = server_base(self._config)
        if not base:
            return None
        import aiohttp

        headers = {}
        if key := openai_key(self._config)[0]:  # the key the chat calls send there, and no other
            headers["Authorization"] = f"Bearer {key}"
        timeout = aiohttp.ClientTimeout(total=MODELS_TIMEOUT)
        try:
            async with (
                aiohttp.ClientSession(timeout=timeout) as http,
                http.get(base.rstrip("/") + "/models", headers=headers) as response,
            ):
                if response.status != 200:
                    return None
                payload = await response.json(content_type=None)
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            logger.debug("could not read %s/models: %s", base, exc)
            return None
        return context_length_in(payload, self._config.model)

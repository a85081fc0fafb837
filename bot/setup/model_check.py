"""Whether the model answers, and when not, the one fix for what went wrong (server down, key refused, model
unknown): doctor's and init's `model` line, and the health endpoint's probe."""

from __future__ import annotations

from typing import Any

from bot.config.schema import Config, LLMConfig
from bot.errors import MissingApiKey, ModelNotFound, ProviderAuthError, ProviderError, ProviderUnreachable
from bot.llm.transports.openai_endpoint import server_base
from bot.setup.check import Check

HTTP_TIMEOUT = 10.0
NO_MODEL_LIST = (404, 405, 501)  # a chat-only server (or proxy) has no /models: ask for a chat answer instead
START_SERVER = "start the model server, or correct llm.api_base"
CHECK_MODEL = "check llm.model: the server does not know that model"
NEEDS_KEY = "the server wants a key: set llm.api_key"
WRONG_KEY = "set llm.api_key to a key the server accepts"


async def check_model(config: Config) -> Check:
    """The model answers: the server's /v1/models when one is named (api_base, OPENAI_BASE_URL) and lists it, else
    (a hosted provider, no such list, the model not listed) a one-token chat request."""
    if base := server_base(config.llm):
        return await _check_models_endpoint(config.llm, base)
    return await _check_by_chat(config.llm, f"{config.llm.model} answers")


async def _check_by_chat(llm: LLMConfig, answered: str) -> Check:
    """One chat request of one token, as a hosted provider is asked; `answered` is the detail when it answers."""
    from bot.llm.provider import ModelProvider
    from bot.retry import RetryPolicy

    provider = ModelProvider(llm.model_copy(update={"max_tokens": 1}), RetryPolicy(attempts=1))
    try:
        await provider.chat([{"role": "user", "content": "ping"}])
    except ProviderError as exc:
        return Check("model", "fail", f"{llm.model} did not answer: {exc}", fix_for(exc))
    finally:
        await provider.aclose()
    return Check("model", "ok", answered)


def fix_for(error: ProviderError) -> str:
    """The one thing to change for a failed call."""
    if isinstance(error, MissingApiKey):
        return f"set llm.api_key (or export {' or '.join(error.env_vars)})"
    if isinstance(error, ProviderAuthError):
        return "set llm.api_key to a key the provider accepts"
    if isinstance(error, ModelNotFound):
        return CHECK_MODEL
    if isinstance(error, ProviderUnreachable):
        return START_SERVER
    return "check llm.model and llm.api_key"


async def _check_models_endpoint(llm: LLMConfig, base: str) -> Check:
    import aiohttp

    from bot.llm.transports.openai_http import openai_key

    url = base.rstrip("/") + "/models"
    headers = {}
    if key := openai_key(llm)[0]:  # the key the chat calls send there, and no other
        headers["Authorization"] = f"Bearer {key}"
    payload: Any = None
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=HTTP_TIMEOUT)) as http,
            http.get(url, headers=headers) as response,
        ):
            status = response.status
            if status == 200:
                payload = await response.json(content_type=None)
    except (aiohttp.ClientError, TimeoutError) as exc:
        return Check("model", "fail", f"cannot reach {url} ({type(exc).__name__})", START_SERVER)
    except ValueError:
        payload = None  # a 200 that is not JSON: the chat request below decides
    if status in (401, 403):
        if not key:
            return Check("model", "fail", f"{url} wants a key; none was sent ({status})", NEEDS_KEY)
        return Check("model", "fail", f"{url} refused the key ({status})", WRONG_KEY)
    if status in NO_MODEL_LIST:
        return await _check_by_chat(llm, f"{llm.model} at {base} answers (the server lists no models: {status})")
    if status != 200:
        return Check("model", "fail", f"{url} answered {status}", "check llm.api_base (or OPENAI_BASE_URL)")
    if lists(payload, llm.model):
        return Check("model", "ok", f"{llm.model} at {base} answers")
    # Not listed under this name (llama.cpp lists a file, Ollama adds tags): only a chat request can tell.
    return await _check_by_chat(llm, f"{llm.model} at {base} answers")


def lists(payload: Any, model: str) -> bool:
    """Whether a /models answer names the model, with or without its litellm provider prefix."""
    entries = payload.get("data") if isinstance(payload, dict) else None
    ids = {entry.get("id") for entry in entries or [] if isinstance(entry, dict)}
    return model in ids or model.split("/", 1)[-1] in ids

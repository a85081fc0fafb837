"""Request parameters per model: what config asks for, and the OpenAI wire body litellm makes of it per family.

Both transports take `request_params`; litellm maps them itself (`drop_params` on), the direct path maps them
with `openai_body`, which mirrors litellm's rules for `openai/…` models (`llms/openai/chat/o_series_transformation`
and `gpt_5_transformation`): the o-series and the gpt-5 family take `max_completion_tokens` for `max_tokens` and
no temperature but 1; `reasoning_effort` goes to them and to models outside litellm's catalogue, not to the
catalogue's other models.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, Literal

from bot.config.schema import LLMConfig
from bot.llm.prices import openai_capabilities

Family = Literal["o_series", "gpt_5", "gpt_5_search", "catalogue", "unknown"]

# What a gpt-5 search model takes, of the keys relaybot sends (litellm's list for them, cut to those).
_SEARCH_KEYS = frozenset({"model", "messages", "max_completion_tokens", "stream", "stream_options"})
# Effort levels litellm refuses unless the model's row says it takes them; "max" it never gates.
_OPT_IN_EFFORTS = frozenset({"xhigh"})
_ROUTE_SPECIFIC_EFFORTS = frozenset({"max"})


def request_params(config: LLMConfig) -> dict[str, Any]:
    """The sampling and steering parameters of a call, in litellm's names, as config sets them."""
    params: dict[str, Any] = {"max_tokens": config.max_tokens, "temperature": config.temperature}
    if config.reasoning_effort is not None:
        params["reasoning_effort"] = config.reasoning_effort
    if config.extra_headers:
        params["extra_headers"] = dict(config.extra_headers)
    return params


@functools.cache
def family(name: str) -> Family:
    """Which of litellm's OpenAI configurations handles the model `name` (no `openai/` prefix)."""
    known = name in openai_capabilities()
    if known and len(name) > 1 and name[0] == "o" and name[1].isdigit():
        return "o_series"
    if any(marker in name for marker in ("gpt-5", "gpt-6")) and "gpt-5-chat" not in name.split("/")[-1]:
        return "gpt_5_search" if "gpt-5" in name and "search" in name else "gpt_5"
    return "catalogue" if known else "unknown"


def openai_body(body: dict[str, Any]) -> dict[str, Any]:
    """The wire body (`model` without its prefix) with its parameters mapped as litellm maps them for the model."""
    name = body["model"]
    kind = family(name)
    if kind == "unknown":
        return body
    if kind == "catalogue":
        body.pop("reasoning_effort", None)
        return body
    if "max_tokens" in body:
        body["max_completion_tokens"] = body.pop("max_tokens")
    capabilities = openai_capabilities().get(name, {})
    if kind == "gpt_5_search":
        return {key: value for key, value in body.items() if key in _SEARCH_KEYS}
    if kind == "o_series":
        _o_series(body, capabilities)
    else:
        _gpt_5(body, name, capabilities)
    return body


def _o_series(body: dict[str, Any], capabilities: Mapping[str, Any]) -> None:
    if body.get("temperature", 1) != 1:
        del body["temperature"]
    if not capabilities.get("supports_function_calling"):
        body.pop("tools", None)
    if not capabilities.get("supports_system_messages") and "messages" in body:
        body["messages"] = [
            {"role": "user", "content": m["content"]} if m.get("role") == "system" else m for m in body["messages"]
        ]


def _gpt_5(body: dict[str, Any], name: str, capabilities: Mapping[str, Any]) -> None:
    effort = body.get("reasoning_effort")
    if effort is not None and _refuses_effort(capabilities, effort):
        del body["reasoning_effort"]
        effort = None
    temperature = body.get("temperature", 1)
    takes_none = capabilities.get("supports_none_reasoning_effort") is True
    if temperature != 1 and not (takes_none and _effort_is_none(name, capabilities, effort)):
        del body["temperature"]


def _refuses_effort(capabilities: Mapping[str, Any], level: str) -> bool:
    if level in _ROUTE_SPECIFIC_EFFORTS:
        return False
    flag = capabilities.get(f"supports_{level}_reasoning_effort")
    return flag is not True if level in _OPT_IN_EFFORTS else flag is False


def _effort_is_none(name: str, capabilities: Mapping[str, Any], effort: str | None) -> bool:
    """Whether reasoning is off for this call: the effort asked for, else the model's declared default."""
    if effort is not None:
        return effort == "none"
    declared = capabilities.get("default_reasoning_effort")
    if declared is not None:
        return bool(declared == "none")
    if not _table_declares_defaults():
        return capabilities.get("supports_none_reasoning_effort") is True
    return False


@functools.cache
def _table_declares_defaults() -> bool:
    """litellm trusts a missing default only once the table is new enough to declare defaults anywhere."""
    return any("default_reasoning_effort" in entry for entry in openai_capabilities().values())


def request_headers(request: Mapping[str, Any]) -> dict[str, str]:
    """The HTTP headers of a direct call: JSON, the key as a bearer token, then `llm.extra_headers`."""
    headers = {"Content-Type": "application/json"}
    if request.get("api_key"):
        headers["Authorization"] = f"Bearer {request['api_key']}"
    headers.update(request.get("extra_headers") or {})
    return headers

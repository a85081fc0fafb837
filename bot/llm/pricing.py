"""A call's cost in USD from litellm's bundled price map (bot.llm.prices), or None for an unknown model."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

PriceMap = Callable[[], Mapping[str, Mapping[str, Any]]]


def price_entry(model: str, prices: Mapping[str, Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The price record of `model`, tried as given and without its provider prefix."""
    for name in (model, model.split("/", 1)[-1]):
        entry = prices.get(name)
        if entry and entry.get("input_cost_per_token") is not None:
            return entry
    return None


def call_cost(
    model: str, prompt_tokens: int, completion_tokens: int, cached_tokens: int, prices: Mapping[str, Mapping[str, Any]]
) -> float | None:
    """USD for one call; cached prompt tokens at the cache-read price where the map has one."""
    entry = price_entry(model, prices)
    if entry is None:
        return None
    input_price = float(entry["input_cost_per_token"])
    output_price = float(entry.get("output_cost_per_token") or 0.0)
    cached_price = entry.get("cache_read_input_token_cost")
    cached = min(cached_tokens, prompt_tokens)
    cached_rate = input_price if cached_price is None else float(cached_price)
    return (prompt_tokens - cached) * input_price + cached * cached_rate + completion_tokens * output_price

"""Model prices, windows and OpenAI capabilities from litellm's bundled table, read without importing litellm."""

from __future__ import annotations

import functools
import importlib.util
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

TABLE_FILE = "model_prices_and_context_window_backup.json"


@dataclass(frozen=True, slots=True)
class ModelRecord:
    """What relaybot uses of a model's entry: its window and its prices per token (None where the table has none)."""

    max_input_tokens: int | None
    max_tokens: int | None
    input_cost_per_token: float | None
    output_cost_per_token: float
    cache_read_input_token_cost: float | None = None
    cost_per_image: float | None = None


PriceTable = Mapping[str, ModelRecord]
PriceSource = Callable[[], PriceTable]


def table_path() -> Path | None:
    """Where litellm keeps its table (found without importing litellm), or None when it is not installed."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / TABLE_FILE


def openai_capabilities() -> Mapping[str, Mapping[str, Any]]:
    """The `openai` provider's entries (litellm's catalogue of OpenAI chat models), trimmed to their capabilities."""
    return _bundled()[1]


@functools.cache
def price_table() -> dict[str, ModelRecord]:
    """Every model in litellm's table as a record (window and prices); built once per process."""
    return _bundled()[0]


def _is_capability(key: str) -> bool:
    return key.startswith("supports_") or key == "default_reasoning_effort"


@functools.cache
def _bundled() -> tuple[dict[str, ModelRecord], dict[str, dict[str, Any]]]:
    """One read of the 3 MB table: every model's record, and the OpenAI catalogue's capabilities."""
    path = table_path()
    try:
        raw = json.loads(path.read_bytes()) if path else {}
    except (OSError, ValueError) as exc:
        logger.warning("could not read litellm's model table %s: %s", path, exc)
        raw = {}
    entries = {name: entry for name, entry in raw.items() if isinstance(entry, dict)}
    # As litellm fills `open_ai_chat_completion_models`: the openai provider's names, fine-tune price rows aside.
    openai = {
        name: {key: value for key, value in entry.items() if _is_capability(key)}
        for name, entry in entries.items()
        if entry.get("litellm_provider") == "openai" and not (name.startswith("ft:") and name.count(":") <= 1)
    }
    return records(entries), openai


def records(entries: Mapping[str, Mapping[str, Any]]) -> dict[str, ModelRecord]:
    """Entries in litellm's table format (`input_cost_per_token`, …) as records."""
    return {name: _record(entry) for name, entry in entries.items()}


def _record(entry: Mapping[str, Any]) -> ModelRecord:
    def price(key: str) -> float | None:
        value = entry.get(key)
        return float(value) if isinstance(value, int | float) else None

    def count(key: str) -> int | None:
        value = entry.get(key)
        return value if isinstance(value, int) and value > 0 else None

    return ModelRecord(
        count("max_input_tokens"),
        count("max_tokens"),
        price("input_cost_per_token"),
        price("output_cost_per_token") or 0.0,
        price("cache_read_input_token_cost"),
        price("input_cost_per_image") or price("output_cost_per_image"),
    )


def model_record(model: str) -> ModelRecord | None:
    """The record for `provider/name` or `name`, as litellm resolves it; None for a model it does not know."""
    table = price_table()
    return table.get(model) or table.get(model.split("/", 1)[-1])


def call_cost(
    model: str, prompt_tokens: int, completion_tokens: int, cached_tokens: int, table: PriceTable | None = None
) -> float | None:
    """USD for one call, cached prompt tokens at the cache-read price where the table has one; None without a price.

    The one cost function: the provider's `Usage.cost` and the ledger's rows both come from it.
    """
    prices = price_table() if table is None else table
    for name in (model, model.split("/", 1)[-1]):
        record = prices.get(name)
        if record is not None and record.input_cost_per_token is not None:
            input_price = record.input_cost_per_token
            cached = min(cached_tokens, prompt_tokens)
            cached_price = (
                input_price if record.cache_read_input_token_cost is None else record.cache_read_input_token_cost
            )
            return (
                (prompt_tokens - cached) * input_price
                + cached * cached_price
                + completion_tokens * record.output_cost_per_token
            )
    return None


def image_cost(model: str, size: str, quality: str | None, table: PriceTable | None = None) -> float | None:
    """USD for one picture from the table's per-image price (`quality/W-x-H/name` rows first); None without one."""
    prices = price_table() if table is None else table
    dimensions = size.replace("x", "-x-")
    for name in (model, model.split("/", 1)[-1]):
        for key in (f"{quality or 'standard'}/{dimensions}/{name}", f"{dimensions}/{name}", name):
            record = prices.get(key)
            if record is not None and record.cost_per_image is not None:
                return record.cost_per_image
    return None

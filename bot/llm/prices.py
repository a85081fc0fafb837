"""Model prices and windows from litellm's bundled table, read without importing litellm; cost once per call."""

from __future__ import annotations

import functools
import importlib.util
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

TABLE_FILE = "model_prices_and_context_window_backup.json"


@dataclass(frozen=True, slots=True)
class ModelRecord:
    """What relaybot uses of a model's entry: its window and its price per token."""

    max_input_tokens: int | None
    max_tokens: int | None
    input_cost_per_token: float
    output_cost_per_token: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """USD for one call with these token counts."""
        return prompt_tokens * self.input_cost_per_token + completion_tokens * self.output_cost_per_token


def table_path() -> Path | None:
    """Where litellm keeps its table (found without importing litellm), or None when it is not installed."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / TABLE_FILE


# What relaybot reads of an entry; the rest of the 3 MB table is dropped once parsed.
KEPT_KEYS = (
    "input_cost_per_token",
    "output_cost_per_token",
    "cache_read_input_token_cost",
    "max_input_tokens",
    "max_tokens",
)


@functools.cache
def bundled_prices() -> dict[str, dict[str, Any]]:
    """litellm's model map as `litellm.model_cost` holds it offline, trimmed to `KEPT_KEYS`; parsed once per process."""
    path = table_path()
    try:
        raw = json.loads(path.read_bytes()) if path else {}
    except (OSError, ValueError) as exc:
        logger.warning("could not read litellm's model table %s: %s", path, exc)
        raw = {}
    return {
        name: {key: entry[key] for key in KEPT_KEYS if key in entry}
        for name, entry in raw.items()
        if isinstance(entry, dict)
    }


@functools.cache
def price_table() -> dict[str, ModelRecord]:
    """Every model in the table as a record (window and prices)."""
    return {name: _record(entry) for name, entry in bundled_prices().items()}


def _record(entry: dict[str, Any]) -> ModelRecord:
    def number(key: str) -> float:
        value = entry.get(key)
        return float(value) if isinstance(value, int | float) else 0.0

    def count(key: str) -> int | None:
        value = entry.get(key)
        return value if isinstance(value, int) and value > 0 else None

    return ModelRecord(
        count("max_input_tokens"), count("max_tokens"), number("input_cost_per_token"), number("output_cost_per_token")
    )


def model_record(model: str) -> ModelRecord | None:
    """The record for `provider/name` or `name`, as litellm resolves it; None for a model it does not know."""
    table = price_table()
    return table.get(model) or table.get(model.split("/", 1)[-1])


def call_cost(model: str, prompt_tokens: int, completion_tokens: int) -> float:
    """USD for one call, from the usage the response carried; 0.0 for a model without a price."""
    record = model_record(model)
    return record.cost(prompt_tokens, completion_tokens) if record else 0.0

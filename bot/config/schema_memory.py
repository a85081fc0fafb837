"""The `memory` section: what is recalled into each turn's prompt from the scope's search index."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from bot.config.schema_embeddings import EmbeddingsConfig
from bot.config.section import Section


class AutoRecallConfig(Section):
    """Passages relevant to the incoming message, put before it in the prompt within `max_tokens`."""

    enabled: bool = True
    max_tokens: int = Field(default=1500, ge=100)


class MemoryConfig(Section):
    """Long-term memory's search: where the index is kept, the recall before each turn (the recall tool is always
    there), and the embedding model that adds semantic search (none: keywords only)."""

    index: Literal["sqlite", "redis"] = "sqlite"  # redis: in the bus's Redis with its vectors, shared (bus redis)
    auto_recall: AutoRecallConfig = AutoRecallConfig()
    embeddings: EmbeddingsConfig | None = None

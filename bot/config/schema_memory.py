"""The `memory` section: what is recalled into each turn's prompt from the scope's search index."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from bot.config.schema_embeddings import EmbeddingsConfig
from bot.config.section import Section
from bot.errors import ConfigError


class AutoRecallConfig(Section):
    """Passages relevant to the incoming message, put before it in the prompt within `max_tokens`."""

    enabled: bool = True
    max_tokens: int = Field(default=1500, ge=100)


class MemoryConfig(Section):
    """Long-term memory's search: where the index is kept, the recall before each turn (the recall tool is always
    there), and the embedding model that adds semantic search (none: keywords only)."""

    index: Literal["sqlite", "redis"] = "sqlite"  # redis: in the bus's Redis, shared by every process (bus redis)
    auto_recall: AutoRecallConfig = AutoRecallConfig()
    embeddings: EmbeddingsConfig | None = None

    @model_validator(mode="after")
    def _vectors_need_the_sqlite_index(self) -> MemoryConfig:
        if self.index == "redis" and self.embeddings is not None:
            raise ConfigError("embeddings keep their vectors in the SQLite index: needs memory.index: sqlite", "memory")
        return self

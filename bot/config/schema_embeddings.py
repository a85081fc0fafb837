"""`memory.embeddings`: the embedding model that adds semantic search to the memory index."""

from __future__ import annotations

from pydantic import Field, SecretStr

from bot.config.durations import Duration
from bot.config.section import Section


class EmbeddingsConfig(Section):
    """Any litellm embedding model, or with `api_base` an OpenAI-compatible `/v1/embeddings` server."""

    model: str = Field(min_length=1)
    api_base: str | None = None
    api_key: SecretStr = SecretStr("")  # with api_base, the only key sent there: no environment fallback
    batch_size: int = Field(default=64, gt=0, le=2048)
    min_similarity: float = Field(default=0.3, ge=-1, le=1)  # a vector hit closer than this is no hit
    timeout: Duration = Field(default=30.0, gt=0)

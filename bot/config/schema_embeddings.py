"""`memory.embeddings`: the embedding model that adds semantic search to the memory index."""

from __future__ import annotations

from pydantic import Field, SecretStr, ValidationInfo, field_validator

from bot.config.durations import Duration
from bot.config.section import Section

LOCAL_MODEL = "local"  # the in-process model of relaybot[local-embeddings]: no server, no key


class EmbeddingsConfig(Section):
    """Any litellm embedding model, or with `api_base` an OpenAI-compatible `/v1/embeddings` server, or `local`."""

    model: str = Field(min_length=1)
    api_base: str | None = None
    api_key: SecretStr = SecretStr("")  # with api_base, the only key sent there: no environment fallback
    batch_size: int = Field(default=64, gt=0, le=2048)
    min_similarity: float = Field(default=0.3, ge=-1, le=1)  # a vector hit closer than this is no hit
    timeout: Duration = Field(default=30.0, gt=0)

    @property
    def local(self) -> bool:
        """Whether the model is the in-process one."""
        return self.model == LOCAL_MODEL

    @field_validator("api_base", "api_key")
    @classmethod
    def _local_takes_no_server(cls, value: str | SecretStr | None, info: ValidationInfo) -> str | SecretStr | None:
        given = value.get_secret_value() if isinstance(value, SecretStr) else value
        if given and info.data.get("model") == LOCAL_MODEL:
            raise ValueError(f"model: {LOCAL_MODEL} runs in this process, with no server or key: leave it out")
        return value

"""Whether `memory.embeddings`' model answers: doctor's `embeddings` line, with the fix when it does not."""

from __future__ import annotations

from bot.config.schema_embeddings import EmbeddingsConfig
from bot.errors import ProviderError
from bot.setup.check import Check

FIX = "check memory.embeddings (model, api_base, api_key) and that its server is running"


async def check_embeddings(config: EmbeddingsConfig) -> Check:
    """One word embedded with the configured model: its vector's size, or why it failed."""
    from bot.llm.embeddings import Embedder, EmbeddingModel
    from bot.llm.local_embeddings import INSTALL, LocalEmbeddings

    model: Embedder = LocalEmbeddings() if config.local else EmbeddingModel(config)
    where = f"{config.model} at {config.api_base}" if config.api_base else model.model
    try:
        embedded = await model.embed(["ping"])
    except ProviderError as exc:
        return Check("embeddings", "fail", f"{where} did not answer: {exc}", INSTALL if config.local else FIX)
    return Check("embeddings", "ok", f"{where} answers ({len(embedded.vectors[0])} dimensions)")

"""Semantic memory search: passages embedded in background batches, each question's vector one more ranked list.

While the embedding server fails, keyword search answers alone: one WARNING when it starts failing, one INFO when
it answers again, and no calls for a growing pause in between (so a dead server costs no turn any time).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from bot.config.schema_embeddings import EmbeddingsConfig
from bot.errors import BudgetExceeded, ConfigError, ProviderError
from bot.llm.embeddings import Embedder, EmbeddingModel
from bot.llm.local_embeddings import INSTALL, LocalEmbeddings, missing_packages
from bot.memory.index.protocols import IndexHome, PassageIndex, VectorStore
from bot.memory.index.query import Query
from bot.memory.index.ranking import Ranker
from bot.memory.index.store import FileIndexes
from bot.storage.recent import RecentMap
from bot.usage.budgets import BudgetGuard
from bot.usage.charge import Charge, charged_to
from bot.usage.ledger import Ledger
from bot.usage.metered_embeddings import MeteredEmbeddings

logger = logging.getLogger(__name__)

QUERY_TIMEOUT = 5.0  # a question's vector is worth this much of a turn's time at most
FIRST_PAUSE = 30.0
LONGEST_PAUSE = 600.0
MAX_OPEN = 32


class SemanticMemory:
    """Vectors for every scope's index: kept up to date in the background, searched for each question."""

    def __init__(
        self,
        embedder: Embedder,
        batch_size: int,
        min_similarity: float = -1.0,
        clock: Callable[[], float] = time.monotonic,
        max_open: int = MAX_OPEN,
        home: IndexHome | None = None,
    ) -> None:
        """`home` keeps the vectors beside the indexes (None: in the SQLite files)."""
        self._embedder = embedder
        self._batch = batch_size
        self._floor = min_similarity
        self._clock = clock
        self._home: IndexHome = FileIndexes() if home is None else home
        self._stores: RecentMap[Path, VectorStore] = RecentMap(max_open, on_evict=lambda _, store: store.close())
        self._opening = threading.Lock()  # searches open stores from worker threads
        self._tasks: dict[Path, asyncio.Task[None]] = {}
        self._again: set[Path] = set()  # indexes that changed while their embedding ran
        self._paused_until = 0.0
        self._pause = 0.0

    def index_changed(self, scope: str, path: Path) -> None:
        """The index of `scope` (at `path`) has new passages: embed them in the background (one task per index at a
        time)."""
        if path in self._tasks:
            self._again.add(path)
            return
        task = asyncio.create_task(self._embed_pending(scope, path), name=f"memory-vectors:{path.parent.name}")
        self._tasks[path] = task

        def done(finished: asyncio.Task[None]) -> None:
            self._tasks.pop(path, None)
            if not finished.cancelled() and finished.exception() is not None:
                logger.error("embedding the memory index %s failed", path, exc_info=finished.exception())
            elif path in self._again and not finished.cancelled():
                self._again.discard(path)
                self.index_changed(scope, path)

        task.add_done_callback(done)

    async def ranker(self, text: str, scope: str, path: Path) -> Ranker | None:
        """A ranker of the scope's passages by closeness to the question's vector; None when no vector can be had
        now."""
        if self._clock() < self._paused_until:
            return None
        try:
            embedded = await asyncio.wait_for(self._embedder.embed([text]), QUERY_TIMEOUT)
        except BudgetExceeded:
            return None
        except (ProviderError, TimeoutError) as exc:
            self._failed(exc)
            return None
        self._answered()
        vector = embedded.vectors[0]

        def nearest(
            index: PassageIndex, query: Query, limit: int, since: float | None, until: float | None
        ) -> list[int]:
            return self.vectors(scope, path).nearest(vector, limit, since, until, self._floor)

        return nearest

    def vectors(self, scope: str, path: Path) -> VectorStore:
        """The vector store of the scope's index at `path` (a few are kept open, the least used closed)."""
        with self._opening:
            store = self._stores.get(path, fresh=True)
            if store is None:
                store = self._stores[path] = self._home.vectors(scope, path, self._embedder.model)
            return store

    async def idle(self) -> None:
        """Return once no background embedding runs."""
        while running := [task for task in self._tasks.values() if not task.done()]:
            await asyncio.wait(running)

    async def stop(self) -> None:
        """Cancel the background embedding and close the stores."""
        for task in list(self._tasks.values()):
            task.cancel()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        with self._opening:
            for store in self._stores.values():
                store.close()
            self._stores.clear()

    async def _embed_pending(self, scope: str, path: Path) -> None:
        """Embed the index's passages that lack a vector, batch by batch, as background work."""
        store = self.vectors(scope, path)
        with charged_to(Charge("embedding")):
            while self._clock() >= self._paused_until:
                batch = await asyncio.to_thread(store.pending, self._batch)
                if not batch:
                    await asyncio.to_thread(store.load)
                    return
                try:
                    embedded = await self._embedder.embed([passage.text for passage in batch])
                except BudgetExceeded:
                    logger.debug("embedding the memory index paused by the background budget")
                    return
                except ProviderError as exc:
                    self._failed(exc)
                    return
                self._answered()
                await asyncio.to_thread(store.store, batch, embedded.vectors)

    def _failed(self, exc: BaseException) -> None:
        if self._pause == 0.0:
            logger.warning(
                "the embedding server failed (%s); memory search uses keywords alone until it answers again",
                str(exc) or type(exc).__name__,
            )
        self._pause = min(LONGEST_PAUSE, max(FIRST_PAUSE, self._pause * 2))
        self._paused_until = self._clock() + self._pause

    def _answered(self) -> None:
        if self._pause:
            logger.info("the embedding server answers again; memory search uses vectors again")
        self._pause = 0.0
        self._paused_until = 0.0


def semantic_memory(
    config: EmbeddingsConfig | None, ledger: Ledger, guard: BudgetGuard, home: IndexHome | None = None
) -> SemanticMemory | None:
    """Semantic search with `memory.embeddings`' model, every call metered and within budget (the local model's
    cost nothing: no row, no budget), its vectors kept in `home` beside the indexes; None when unset. ConfigError
    when the local model's packages are missing."""
    if config is None:
        return None
    if config.local:
        if missing := missing_packages():
            raise ConfigError(f"model local needs {', '.join(missing)}: {INSTALL}", "memory.embeddings.model")
        return SemanticMemory(LocalEmbeddings(), config.batch_size, config.min_similarity, home=home)
    embedder = MeteredEmbeddings(EmbeddingModel(config), ledger, guard)
    return SemanticMemory(embedder, config.batch_size, config.min_similarity, home=home)

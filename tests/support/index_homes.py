"""Where the memory indexes are kept, for tests that run against both: SQLite files, or a real redis-server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.cluster.redis import RedisState
from bot.memory.index.protocols import IndexHome
from bot.memory.index.redis.store import RedisIndexes
from bot.memory.index.store import FileIndexes


@pytest.fixture(params=["sqlite", "redis"])
def index_home(request: pytest.FixtureRequest) -> Iterator[IndexHome]:
    """Each scope's index in an SQLite file, or in a fresh redis-server (the same tests run against both)."""
    if request.param == "sqlite":
        yield FileIndexes()
        return
    shared = RedisState(request.getfixturevalue("redis_url"), prefix="t")
    yield RedisIndexes(shared)
    shared.client.close()

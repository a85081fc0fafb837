"""Archives that retention deletes leave every memory index at its next catch-up, on both session backends and
with the index in SQLite files or in Redis."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bot.cluster.redis import RedisState
from bot.config.schema_ops import RetentionConfig
from bot.memory.index.protocols import IndexHome
from bot.memory.members import FileMembers
from bot.memory.redis_members import RedisMembers
from bot.ops.redis_retention import prune_redis
from bot.sessions.logs import FileLogs
from bot.sessions.redis_logs import RedisLogs
from bot.sessions.redis_store import RedisSessionStore
from bot.sessions.store import SessionStore, prune_archived
from tests.memory.test_scope_index import Backend, asked, indexes

DAY = 86400.0
Prune = Callable[[], int]  # retention's pass over every archive (all of them old by then); how many went


@pytest.fixture(params=["local", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Backend, Backend, Prune]]:
    """Two workers' views of one store, and retention's pass over it."""
    if request.param == "local":
        folder = tmp_path / "sessions"
        sessions, logs, members = SessionStore(folder), FileLogs(folder), FileMembers(tmp_path / "lists")
        yield Backend(sessions, logs, members), Backend(sessions, logs, members), lambda: prune_archived(folder, 4e9)
        return
    shared = RedisState(request.getfixturevalue("redis_url"), prefix="t")

    def prune() -> int:
        return prune_redis(shared, RetentionConfig(sessions=DAY, ledger=None), 0.0, time.time() + 10 * DAY)[0]

    yield (
        Backend(RedisSessionStore(shared), RedisLogs(shared), RedisMembers(shared)),
        Backend(RedisSessionStore(shared), RedisLogs(shared), RedisMembers(shared)),
        prune,
    )
    shared.client.close()


async def test_passages_of_an_archive_retention_deleted_leave_every_workers_index(
    tmp_path: Path, store: tuple[Backend, Backend, Prune], index_home: IndexHome
) -> None:
    first, second, prune = store
    index_a, index_b = indexes(tmp_path, first, "a", index_home), indexes(tmp_path, second, "b", index_home)
    scope = tmp_path / "ws" / "memory"
    first.say("telegram:1", "The old alarm code is 4821", "Noted")
    first.sessions.reset("telegram:1")
    first.say("telegram:1", "The new alarm code is 9377", "Noted")
    before = [sorted(asked(await index.search(scope, "alarm code", join="telegram:1"))) for index in (index_a, index_b)]

    assert prune() == 1
    after = [asked(await index.search(scope, "alarm code")) for index in (index_a, index_b)]
    await index_a.stop()
    await index_b.stop()

    assert before == [["The new alarm code is 9377", "The old alarm code is 4821"]] * 2
    assert after == [["The new alarm code is 9377"]] * 2


async def test_a_pass_that_deletes_nothing_leaves_the_index_as_it_is(
    tmp_path: Path, store: tuple[Backend, Backend, Prune], index_home: IndexHome
) -> None:
    backend, _, prune = store
    index = indexes(tmp_path, backend, home=index_home)
    scope = tmp_path / "ws" / "memory"
    backend.say("telegram:1", "The bike lock code is 5150", "Noted")
    found = asked(await index.search(scope, "bike lock", join="telegram:1"))

    assert prune() == 0
    assert asked(await index.search(scope, "bike lock")) == found == ["The bike lock code is 5150"]
    await index.stop()

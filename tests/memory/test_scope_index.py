"""The scope index on both session backends: every message of every session found, kept incrementally, a cache."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.cluster.redis import RedisState
from bot.memory.index.protocols import IndexHome, PassageIndex
from bot.memory.index.query import Query
from bot.memory.index.ranking import Shown
from bot.memory.index.redis.store import RedisIndexes
from bot.memory.index.scopes import MemoryIndexes
from bot.memory.members import FileMembers, ScopeMembers
from bot.memory.redis_members import RedisMembers
from bot.sessions.logs import FileLogs, SessionLogs
from bot.sessions.redis_logs import RedisLogs
from bot.sessions.redis_store import RedisSessionStore
from bot.sessions.session import Sessions
from bot.sessions.store import SessionStore

HEADER = "[telegram DM 1 · from Ann (1) · 2026-03-02 10:00 Monday]\n"


class Backend:
    """A session store, the log reader a worker's index uses with it and where scopes list their sessions."""

    def __init__(self, sessions: Sessions, logs: SessionLogs, members: ScopeMembers) -> None:
        self.sessions = sessions
        self.logs = logs
        self.members = members

    def say(self, key: str, text: str, reply: str) -> None:
        session = self.sessions.get(key)
        self.sessions.append(session, [{"role": "user", "content": HEADER + text}])
        call = {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "function": {"name": "recall"}}]}
        tool = {"role": "tool", "tool_call_id": "c", "name": "recall", "content": "From earlier: zeppelin"}
        self.sessions.append(session, [call, tool, {"role": "assistant", "content": reply}])


@pytest.fixture(params=["local", "redis"])
def backends(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Backend, Backend]]:
    """Two workers' views of one shared store (the same process's, on the local backend)."""
    if request.param == "local":
        store = SessionStore(tmp_path / "sessions")
        logs, members = FileLogs(tmp_path / "sessions"), FileMembers(tmp_path / "lists")
        yield Backend(store, logs, members), Backend(store, logs, members)
        return
    url = request.getfixturevalue("redis_url")
    shared = RedisState(url, prefix="t")
    yield (
        Backend(RedisSessionStore(shared), RedisLogs(shared), RedisMembers(shared)),
        Backend(RedisSessionStore(shared), RedisLogs(shared), RedisMembers(shared)),
    )
    shared.client.close()


@pytest.fixture
async def first(
    tmp_path: Path, backends: tuple[Backend, Backend], index_home: IndexHome
) -> AsyncIterator[tuple[Backend, MemoryIndexes, Path]]:
    """The first worker's backend, its index and the main scope; the index is stopped after the test."""
    index = indexes(tmp_path, backends[0], home=index_home)
    yield backends[0], index, tmp_path / "ws" / "memory"
    await index.stop()


def indexes(tmp_path: Path, backend: Backend, worker: str = "a", home: IndexHome | None = None) -> MemoryIndexes:
    state = tmp_path / f"state-{worker}"
    return MemoryIndexes(backend.logs, backend.members, tmp_path / "ws", state, "UTC", clock=lambda: 1.78e9, home=home)


def asked(hits: list[Any]) -> list[str]:
    return [hit.stored.passage.asked for hit in hits]


async def test_every_message_of_live_and_archived_sessions_is_found_by_stemmed_words(
    first: tuple[Backend, MemoryIndexes, Path],
) -> None:
    backend, index, scope = first
    backend.say("telegram:1", "We hiked the Eagle Crest trail", "Sounds lovely")
    await index.join(scope, "telegram:1")
    backend.sessions.reset("telegram:1")
    backend.say("telegram:1", "My sister Maria moved to Lisbon", "Nice city")
    backend.say("console:direct", "Bought a kayak today", "Enjoy it")
    await index.join(scope, "console:direct")

    assert asked(await index.search(scope, "which trails did I hike?")) == ["We hiked the Eagle Crest trail"]
    assert asked(await index.search(scope, "where does my sister live now")) == ["My sister Maria moved to Lisbon"]
    [hit] = await index.search(scope, "kayaks")
    assert (hit.stored.passage.speaker, hit.stored.passage.answered) == ("Ann", "Enjoy it")
    assert await index.search(scope, "zeppelin") == []  # a tool result is not something the chat said
    assert await index.search(scope, "what did you say about it?") == []


async def test_a_second_worker_catches_up_from_the_shared_store_with_identical_results(
    tmp_path: Path, backends: tuple[Backend, Backend], index_home: IndexHome
) -> None:
    first, second = backends
    index_a, index_b = indexes(tmp_path, first, "a", index_home), indexes(tmp_path, second, "b", index_home)
    scope = tmp_path / "ws" / "memory"
    for n in range(30):
        first.say("telegram:1", f"Note {n}: the garden needs tomatoes and basil", f"Noted {n}")
    await index_a.join(scope, "telegram:1")
    second.say("telegram:1", "The garden gnome is called Herbert", "Ha")  # written on the other worker
    second.sessions.reset("telegram:1")
    second.say("telegram:1", "Planting basil in the garden again", "Good")

    query = "what's in my garden, basil or gnome?"
    assert asked(await index_a.search(scope, query)) == asked(await index_b.search(scope, query))
    assert "The garden gnome is called Herbert" in asked(await index_a.search(scope, "gnome name"))
    await index_a.stop()
    await index_b.stop()


async def test_passages_in_the_prompt_history_are_left_out(first: tuple[Backend, MemoryIndexes, Path]) -> None:
    backend, index, scope = first
    backend.say("telegram:1", "The wifi password is on the fridge", "OK")
    backend.say("telegram:1", "The fridge is making noise", "Call a repair")
    await index.join(scope, "telegram:1")

    found = await index.search(scope, "fridge", shown=Shown("telegram:1", 4))
    assert asked(found) == ["The wifi password is on the fridge"]


async def test_history_entries_and_memory_facts_are_passages_with_dates(tmp_path: Path, index_home: IndexHome) -> None:
    logs, members = FileLogs(tmp_path / "s"), FileMembers(tmp_path / "l")
    index = MemoryIndexes(logs, members, tmp_path / "ws", tmp_path / "state", "UTC", home=index_home)
    scope = tmp_path / "ws" / "memory"
    scope.mkdir(parents=True)
    (scope / "HISTORY.md").write_text("# History\n\n[2026-02-01 09:30] Planned the trip to Porto with Ben.\n")
    (scope / "MEMORY.md").write_text("# People\n- Ben is the user's brother\n")

    [entry] = await index.search(scope, "porto trip")
    assert entry.stored.passage.kind == "entry"
    followed = [hit.stored.passage.asked for hit in await index.search(scope, "porto trip", follow=True)]
    assert followed == ["Planned the trip to Porto with Ben.", "Ben is the user's brother"]  # the entry names Ben
    assert entry.stored.passage.ts == 1769938200.0
    with (scope / "HISTORY.md").open("a") as history:
        history.write("\n[2026-02-03 10:00] Booked the Porto hotel.\n")
    (scope / "MEMORY.md").write_text("# People\n- Ben is the user's older brother, a chef\n")
    assert len(await index.search(scope, "porto")) == 2
    fact = (await index.search(scope, "is ben a chef?"))[0]
    assert (fact.stored.passage.asked, fact.stored.passage.answered) == (
        "Ben is the user's older brother, a chef",
        "People",
    )
    await index.stop()


async def test_a_deleted_or_corrupt_index_is_rebuilt_with_one_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = SessionStore(tmp_path / "sessions")
    backend = Backend(store, FileLogs(tmp_path / "sessions"), FileMembers(tmp_path / "lists"))
    scope = tmp_path / "ws" / "memory"
    backend.say("telegram:1", "The boat is named Seagull", "Nice")
    index = indexes(tmp_path, backend)
    await index.join(scope, "telegram:1")
    path = index.path_for(scope)
    assert path.stat().st_mode & 0o777 == 0o600
    await index.stop()

    path.unlink()
    with caplog.at_level(logging.INFO):
        assert asked(await index.search(scope, "boat name")) == ["The boat is named Seagull"]
    assert [(r.levelname, r.getMessage()) for r in caplog.records if "missing" in r.getMessage()] == [
        ("INFO", f"memory index {path} is missing: rebuilding it from the session logs")
    ]
    await index.stop()

    caplog.clear()
    path.write_bytes(b"this is not a database" * 100)
    with caplog.at_level(logging.WARNING):
        assert asked(await index.search(scope, "seagull")) == ["The boat is named Seagull"]
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 1
    await index.stop()


async def test_an_index_of_another_version_is_rebuilt(tmp_path: Path) -> None:
    import sqlite3

    store = SessionStore(tmp_path / "sessions")
    backend = Backend(store, FileLogs(tmp_path / "sessions"), FileMembers(tmp_path / "lists"))
    scope = tmp_path / "ws" / "memory"
    backend.say("telegram:1", "Violin lessons on Tuesday", "Fun")
    index = indexes(tmp_path, backend)
    await index.join(scope, "telegram:1")
    await index.stop()
    with sqlite3.connect(index.path_for(scope)) as db:
        db.execute("PRAGMA user_version = 0")
        db.execute("DROP TABLE marks")

    assert asked(await index.search(scope, "violin")) == ["Violin lessons on Tuesday"]
    await index.stop()


async def test_a_redis_index_of_another_version_is_rebuilt(tmp_path: Path, redis_url: str) -> None:
    shared = RedisState(redis_url, prefix="t")
    backend = Backend(SessionStore(tmp_path / "sessions"), FileLogs(tmp_path / "sessions"), FileMembers(tmp_path / "l"))
    scope = tmp_path / "ws" / "memory"
    backend.say("telegram:1", "Violin lessons on Tuesday", "Fun")
    index = indexes(tmp_path, backend, home=RedisIndexes(shared))
    await index.join(scope, "telegram:1")
    await index.stop()
    version = shared.key("memory-index", "{memory}", "version")
    shared.client.set(version, "0")
    shared.client.hset(shared.key("memory-index", "{memory}", "marks"), "history", "left by the old version")

    assert asked(await index.search(scope, "violin")) == ["Violin lessons on Tuesday"]
    assert shared.client.get(version) == "1"
    assert shared.client.hget(shared.key("memory-index", "{memory}", "marks"), "history") is None
    await index.stop()
    shared.client.close()


async def test_a_session_file_rewritten_in_place_is_indexed_once(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    backend = Backend(store, FileLogs(tmp_path / "sessions"), FileMembers(tmp_path / "lists"))
    scope = tmp_path / "ws" / "memory"
    backend.say("telegram:1", "The piano tuner comes on Friday", "OK")
    index = indexes(tmp_path, backend)
    await index.join(scope, "telegram:1")
    live = tmp_path / "sessions" / "telegram%3A1.jsonl"
    copy = live.with_suffix(".tmp")
    copy.write_bytes(live.read_bytes())
    copy.replace(live)  # a new file (another inode) with the same messages, as a format upgrade writes it

    assert asked(await index.search(scope, "piano tuner")) == ["The piano tuner comes on Friday"]
    await index.stop()


async def test_a_further_ranked_list_is_fused_with_the_keyword_one(tmp_path: Path, index_home: IndexHome) -> None:
    store = SessionStore(tmp_path / "sessions")
    backend = Backend(store, FileLogs(tmp_path / "sessions"), FileMembers(tmp_path / "lists"))
    scope = tmp_path / "ws" / "memory"
    backend.say("telegram:1", "We planted tulips by the fence", "Lovely")
    backend.say("telegram:1", "The fence needs new paint", "OK")
    backend.say("telegram:1", "Spring flowers make me happy", "Same")
    index = indexes(tmp_path, backend, home=index_home)
    await index.join(scope, "telegram:1")
    fed: list[str] = []

    def semantic(found: PassageIndex, query: Query, limit: int, since: float | None, until: float | None) -> list[int]:
        stored = sorted(found.passages(range(1, 11)).values(), key=lambda each: each.id)
        fed.extend(each.passage.asked for each in stored)
        return [each.id for each in stored if "flowers" in each.passage.asked]

    index.rankers.append(semantic)
    found = asked(await index.search(scope, "tulips"))
    await index.stop()
    assert found[0] == "We planted tulips by the fence" and "Spring flowers make me happy" in found
    assert fed[:3] == ["We planted tulips by the fence", "The fence needs new paint", "Spring flowers make me happy"]


async def test_a_resumed_session_is_indexed_once(first: tuple[Backend, MemoryIndexes, Path]) -> None:
    backend, index, scope = first
    backend.say("telegram:1", "The spare tyre is in the garage loft", "Noted")
    await index.join(scope, "telegram:1")
    backend.sessions.reset("telegram:1")
    backend.say("telegram:1", "Something else entirely", "OK")
    await index.join(scope, "telegram:1")
    [archived] = backend.sessions.archives("telegram:1")
    backend.sessions.resume("telegram:1", archived.id)
    backend.say("telegram:1", "And the jack is in the boot", "OK")

    assert asked(await index.search(scope, "garage loft tyre")) == ["The spare tyre is in the garage loft"]
    assert asked(await index.search(scope, "jack boot")) == ["And the jack is in the boot"]


async def test_what_other_sessions_save_shows_from_the_next_check_and_what_left_the_prompt_at_once(
    tmp_path: Path, backends: tuple[Backend, Backend]
) -> None:
    backend = backends[0]
    now = [0.0]
    index = MemoryIndexes(
        backend.logs, backend.members, tmp_path / "ws", tmp_path / "state", "UTC", recheck=1.0, ticks=lambda: now[0]
    )
    scope = tmp_path / "ws" / "memory"
    backend.say("telegram:1", "The boat is moored at pier nine", "OK")  # messages 0-3
    backend.say("console:direct", "Bought new oars", "Nice")
    await index.join(scope, "console:direct")
    assert asked(await index.search(scope, "boat", shown=Shown("telegram:1", 4), join="telegram:1")) == [
        "The boat is moored at pier nine"
    ]
    backend.say("console:direct", "The kayak is moored at pier nine too", "OK")  # another session of the scope
    now[0] = 0.9
    within = asked(await index.search(scope, "kayak", shown=Shown("telegram:1", 4), join="telegram:1"))
    now[0] = 1.0
    rechecked = asked(await index.search(scope, "kayak", shown=Shown("telegram:1", 4), join="telegram:1"))
    backend.say("telegram:1", "The canoe is moored at pier nine as well", "OK")  # messages 4-7
    now[0] = 1.1
    left = asked(await index.search(scope, "canoe", shown=Shown("telegram:1", 8), join="telegram:1"))
    await index.stop()

    assert within == []
    assert rechecked == ["The kayak is moored at pier nine too"]
    assert left == ["The canoe is moored at pier nine as well"]  # the session's own, out of the prompt: no wait

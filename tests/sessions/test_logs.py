"""Session logs read from a position on: each session's own logs only, archived ones kept by identity, whole lines."""

from __future__ import annotations

import asyncio
import json
import resource
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cluster.redis import RedisState
from bot.memory.index.bulk import ChildIndexer
from bot.memory.index.scopes import MemoryIndexes
from bot.memory.members import FileMembers
from bot.sessions.logs import Cursor, FileLogs, LogRead, SessionLogs
from bot.sessions.redis_logs import RedisLogs
from bot.sessions.redis_store import RedisSessionStore
from bot.sessions.session import Sessions
from bot.sessions.store import SessionStore


@pytest.fixture(params=["local", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Sessions, SessionLogs]]:
    if request.param == "local":
        yield SessionStore(tmp_path), FileLogs(tmp_path)
        return
    shared = RedisState(request.getfixturevalue("redis_url"), prefix="t")
    yield RedisSessionStore(shared), RedisLogs(shared)
    shared.client.close()


def test_a_session_archived_by_new_keeps_its_identity_and_neighbours_stay_apart(
    store: tuple[Sessions, SessionLogs],
) -> None:
    sessions, logs = store
    for key in ("telegram:1", "telegram:1:thread9", "telegram:12"):
        sessions.append(sessions.get(key), [{"role": "user", "content": f"hello from {key}"}])
    live = logs.live_heads(["telegram:1"])["telegram:1"]
    sessions.reset("telegram:1")
    sessions.append(sessions.get("telegram:1"), [{"role": "user", "content": "after /new"}])

    assert logs.archived("telegram:1") == [live.log]
    [entry] = logs.read("telegram:1", Cursor(live.log), 10).entries
    assert (entry.n, entry.message["content"]) == (0, "hello from telegram:1")
    head = logs.live_heads(["telegram:1", "telegram:404"])
    assert list(head) == ["telegram:1"] and head["telegram:1"].log != live.log
    assert [e.message["content"] for e in logs.read("telegram:1", Cursor(head["telegram:1"].log), 10).entries] == [
        "after /new"
    ]
    assert logs.read("telegram:1", Cursor("gone"), 10).entries == []


def test_a_line_still_being_written_is_left_for_the_next_read(tmp_path: Path) -> None:
    path = tmp_path / "telegram%3A1.jsonl"
    whole = json.dumps({"type": "message", "ts": 1.0, "n": 0, "message": {"role": "user", "content": "hi"}}) + "\n"
    path.write_text(whole + '{"type": "message", "ts"')
    logs = FileLogs(tmp_path)
    head = logs.live_heads(["telegram:1"])["telegram:1"]
    read = logs.read("telegram:1", Cursor(head.log), 100)
    assert [e.message["content"] for e in read.entries] == ["hi"]
    assert read.cursor.offset == len(whole) and read.done


async def test_a_large_session_file_is_indexed_in_a_child_process_while_the_event_loop_keeps_running(
    tmp_path: Path,
) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    text = "lorem ipsum dolor " * 50
    with (sessions / "telegram%3A1.jsonl").open("w") as handle:
        for n in range(10_000):
            message = {"role": "user" if n % 2 == 0 else "assistant", "content": f"{text} marker{n}"}
            handle.write(json.dumps({"type": "message", "ts": 1.7e9 + n, "n": n, "message": message}) + "\n")
    indexes = MemoryIndexes(
        FileLogs(sessions),
        FileMembers(tmp_path / "lists"),
        tmp_path / "ws",
        tmp_path / "state",
        "UTC",
        bulk=ChildIndexer(sessions, threshold=1_000_000),
    )
    ticks = 0
    longest = 0.0

    async def ticker() -> None:
        nonlocal ticks, longest
        while True:
            started = time.perf_counter()
            await asyncio.sleep(0)  # a yield: the gap between two turns of the loop is what is measured
            longest = max(longest, time.perf_counter() - started)
            ticks += 1

    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    beat = asyncio.create_task(ticker())
    await indexes.join(tmp_path / "ws" / "memory", "telegram:1")
    beat.cancel()
    worked = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - children
    hits = await indexes.search(tmp_path / "ws" / "memory", "marker9998")
    await indexes.stop()
    assert [hit.stored.passage.first for hit in hits] == [9998]
    assert worked > 0.1  # the child parsed and indexed the file
    assert ticks > 1000 and longest < 0.25  # in a thread it stalled the loop 100-400 ms under load


def test_finding_a_sessions_archives_holds_no_list_of_every_session_in_the_folder(tmp_path: Path) -> None:
    # A chat's first search looks for its archives: in a folder of thousands of sessions, what that holds at its
    # peak must not grow with their number (each new chat would raise the heap's high-water mark).
    sessions = SessionStore(tmp_path)
    sessions.append(sessions.get("telegram:1"), [{"role": "user", "content": "before /new"}])
    sessions.reset("telegram:1")
    for n in range(3_000):
        (tmp_path / f"telegram%3A{100_000 + n}.jsonl").touch()
    logs = FileLogs(tmp_path)
    logs.archived("telegram:1")  # anything cached on first use is not the peak measured
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        found = logs.archived("telegram:1")
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert len(found) == 1
    assert peak < 16 * 1024, f"{peak:,} bytes at the peak over a folder of 3,000 sessions"


def _line(record: dict[str, object]) -> str:
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n"


def _read_all(tmp_path: Path, text: str) -> LogRead:
    (tmp_path / "telegram%3A1.jsonl").write_text(text)
    logs = FileLogs(tmp_path)
    return logs.read("telegram:1", Cursor(logs.live_heads(["telegram:1"])["telegram:1"].log), 100)


def test_tool_results_and_textless_tool_calls_come_with_their_role_alone_and_are_counted(tmp_path: Path) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "recall", "arguments": '{"query": "x"}'}}
    messages = [
        {"role": "user", "content": "what did I say?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "name": "recall", "content": "lots " * 2000},
        {"role": "assistant", "content": "You said hello."},
    ]
    sessions = SessionStore(tmp_path)
    sessions.append(sessions.get("telegram:1"), messages, usage=(10, 2))
    logs = FileLogs(tmp_path)
    read = logs.read("telegram:1", Cursor(logs.live_heads(["telegram:1"])["telegram:1"].log), 100)
    assert [(e.n, e.message) for e in read.entries] == [
        (0, messages[0]),
        (1, {"role": "assistant"}),
        (2, {"role": "tool"}),
        (3, messages[3]),
    ]
    assert read.entries[2].ts == read.entries[0].ts > 0
    assert read.cursor.count == 4 and read.done


def test_a_tool_line_torn_and_run_on_into_the_next_write_is_skipped_as_before(tmp_path: Path) -> None:
    torn = '{"type":"message","ts":1.0,"n":0,"message":{"role":"tool","content":"half'
    after = _line({"type": "message", "ts": 2.0, "n": 1, "message": {"role": "user", "content": "next"}})
    usage_torn = '{"type":"usage","prompt":3'
    read = _read_all(tmp_path, torn + after + usage_torn + after)
    assert [(e.n, e.message) for e in read.entries] == []
    assert read.cursor.count == 0 and read.cursor.offset == len((torn + after + usage_torn + after).encode())


def test_lines_written_in_another_key_order_or_spacing_are_parsed_whole(tmp_path: Path) -> None:
    tool_late = {"message": {"content": "result", "role": "tool"}, "n": 0, "ts": 1.5, "type": "message"}
    role_second = {"type": "message", "ts": 2.5, "n": 1, "message": {"content": None, "role": "assistant"}}
    spaced = {"type": "message", "ts": 3.5, "n": 2, "message": {"role": "tool", "content": "spaced"}}
    untyped = {"ts": 4.5, "message": {"role": "user", "content": "no type key"}}
    text = _line(tool_late) + _line(role_second) + json.dumps(spaced) + "\n" + _line(untyped)
    read = _read_all(tmp_path, text)
    assert [(e.n, e.ts, e.message) for e in read.entries] == [
        (0, 1.5, tool_late["message"]),
        (1, 2.5, role_second["message"]),
        (2, 3.5, spaced["message"]),
        (3, 4.5, untyped["message"]),
    ]


def test_other_records_are_skipped_and_a_tool_result_in_parts_is_kept_whole(tmp_path: Path) -> None:
    parts = {"role": "tool", "content": [{"type": "text", "text": "a part"}]}
    text = (
        _line({"type": "usage", "prompt": 3, "completion": 1})
        + _line({"type": "consolidated", "upto": 0})
        + _line({"type": "message", "ts": 1e9, "n": 7, "message": parts})
        + _line({"type": "message", "ts": 2.0, "n": 8, "message": {"role": "assistant", "content": None}})
        + _line({"type": "message", "ts": 3.0, "n": 9, "message": "not a message"})
    )
    read = _read_all(tmp_path, text)
    assert [(e.n, e.ts, e.message) for e in read.entries] == [
        (7, 1e9, parts),
        (8, 2.0, {"role": "assistant", "content": None}),
    ]
    assert read.cursor.count == 2


def test_a_line_is_read_as_json_loads_reads_it(tmp_path: Path) -> None:
    def message(n: int) -> str:
        return json.dumps({"type": "message", "ts": 1.0, "n": n, "message": {"role": "user", "content": f"m{n}"}})

    doubled = message(6)[:-1] + ', "ts": 9.0}'  # a key twice: the last one holds
    text = f" {message(0)}\n{message(1)} \t\n{message(2)}x\n[{message(3)}]\n{message(4)}{message(5)}\n{doubled}\n"
    read = _read_all(tmp_path, text)
    assert [(e.n, e.ts) for e in read.entries] == [(0, 1.0), (1, 1.0), (6, 9.0)]


def test_a_carriage_return_between_a_lines_keys_does_not_end_the_line(tmp_path: Path) -> None:
    first = '{"type":"message",\r"ts":1.0,"n":0,"message":{"role":"user","content":"a"}}\n'
    second = _line({"type": "message", "ts": 2.0, "n": 1, "message": {"role": "user", "content": "b"}})
    read = _read_all(tmp_path, first + second)
    assert [e.message["content"] for e in read.entries] == ["a", "b"]
    assert read.cursor.offset == len(first + second) and read.done

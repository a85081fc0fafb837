"""Tail reads give what a whole read gives for the turn; the cache stays within its bounds."""

import json
from pathlib import Path

import pytest

from bot.sessions.store import SessionStore
from bot.sessions.tail import lines_backwards, read_tail, read_whole


def chat(store: SessionStore, key: str, turns: int, start: int = 0) -> None:
    session = store.get(key)
    for i in range(start, start + turns):
        store.append(session, [{"role": "user", "content": f"q{i}"}])
        store.record_usage(session, 10, 2)
        store.append(session, [{"role": "assistant", "content": f"a{i}"}])


def marked(tmp_path: Path, mark: int, more: int) -> SessionStore:
    """A store whose chat t:1 had 50 turns, a consolidation mark at `mark`, then `more` turns."""
    store = SessionStore(tmp_path, tail=10)
    chat(store, "t:1", 50)
    store.mark_consolidated(store.get("t:1"), mark)
    chat(store, "t:1", more, start=50)
    return store


def test_tail_read_matches_the_whole_file_for_the_turn(tmp_path: Path) -> None:
    session = marked(tmp_path, 60, 5).get("t:1")
    tail = read_tail(session.path, "t:1", 10)
    whole = read_whole(session.path, "t:1")
    assert tail.base + len(tail.messages) == len(whole.messages) == 110
    assert tail.messages == whole.messages[tail.base :] and len(tail.messages) == 10
    assert (tail.prompt_tokens, tail.completion_tokens) == (whole.prompt_tokens, whole.completion_tokens) == (550, 110)
    reloaded = SessionStore(tmp_path, tail=10).get("t:1")
    assert reloaded.history(10) == session.history(10)
    assert reloaded.total == 110 and reloaded.consolidated == 0  # its mark lies before the tail


async def test_the_unconsolidated_backlog_is_read_back_when_needed(tmp_path: Path) -> None:
    marked(tmp_path, 60, 5)
    reloaded = SessionStore(tmp_path, tail=10)
    session = reloaded.get("t:1")
    await reloaded.load_unconsolidated(session)
    assert session.consolidated == 60 and session.base == 60
    assert session.messages[0] == {"role": "user", "content": "q30"} and session.total == 110


async def test_the_backlog_is_read_back_from_the_end_to_the_mark_only(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = marked(tmp_path, 60, 5)
    with store.get("t:1").path.open("r+b") as handle:  # lines before the mark are never parsed
        handle.write(b"garbage that is not JSON")
    reloaded = SessionStore(tmp_path, tail=10)
    session = reloaded.get("t:1")
    await reloaded.load_unconsolidated(session)
    assert session.consolidated == 60 and session.base == 60 and session.total == 110
    assert [m["content"] for m in session.messages[:2]] == ["q30", "a30"]
    assert "unreadable line" not in caplog.text  # the garbage at the start was never reached


async def test_no_backlog_is_read_when_the_tail_starts_after_the_mark(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    marked(tmp_path, 95, 2)
    reloaded = SessionStore(tmp_path, tail=10)
    session = reloaded.get("t:1")
    session.path.write_bytes(b"not JSON\n" * 3)  # a read of the file from here on would log these lines
    await reloaded.load_unconsolidated(session)
    assert (session.consolidated, session.base, session.total) == (95, 94, 104)
    assert "unreadable line" not in caplog.text


def test_a_torn_last_line_is_cut_off_before_the_tail_is_read(tmp_path: Path) -> None:
    store = SessionStore(tmp_path, tail=4)
    chat(store, "t:1", 3)
    path = store.get("t:1").path
    with path.open("ab") as handle:
        handle.write(b'{"type":"message","n":6,"message":{"role":"user","con')
    fresh = SessionStore(tmp_path, tail=4)
    loaded = fresh.get("t:1")
    assert [m["content"] for m in loaded.messages] == ["q1", "a1", "q2", "a2"] and loaded.total == 6
    fresh.append(loaded, [{"role": "user", "content": "after"}])
    last = json.loads(path.read_text().splitlines()[-1])
    assert last["n"] == 6 and last["message"]["content"] == "after"


def test_a_complete_last_line_without_newline_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "t%3A1.jsonl"
    path.write_text('{"type":"message","n":0,"message":{"role":"user","content":"hi"}}')
    assert SessionStore(tmp_path).get("t:1").messages == [{"role": "user", "content": "hi"}]
    assert path.read_text().endswith("}\n")


def test_files_of_the_old_format_are_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "t%3A1.jsonl"
    records = [{"type": "message", "message": {"role": "user", "content": str(i)}} for i in range(5)]
    records += [{"type": "usage", "prompt": 7, "completion": 1}, {"type": "consolidated", "upto": 2}]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    session = SessionStore(tmp_path, tail=2).get("t:1")
    assert session.total == 5 and session.consolidated == 2 and session.prompt_tokens == 7


def test_lines_backwards_crosses_block_boundaries(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"first line\n\nsecond\nthe third line is long\n")
    assert list(lines_backwards(path, block_size=7)) == [b"the third line is long", b"second", b"first line"]


def test_cache_evicts_least_recently_used_by_count(tmp_path: Path) -> None:
    store = SessionStore(tmp_path, max_sessions=3)
    for key in ("a:1", "b:1", "c:1"):
        chat(store, key, 1)
    store.get("a:1")
    chat(store, "d:1", 1)
    assert store.cached == 3
    assert [m["content"] for m in store.get("b:1").messages] == ["q0", "a0"]  # read back from its file
    assert store.cached == 3


def test_cache_stays_within_its_byte_bound(tmp_path: Path) -> None:
    store = SessionStore(tmp_path, max_bytes=2000)
    for i in range(30):
        chat(store, f"t:{i}", 2)
        assert store.cached_bytes <= 2000 or store.cached == 1
    assert store.cached < 30
    assert store.cached_bytes == sum(store.get(f"t:{i}").size for i in range(29 - store.cached + 1, 30))


def test_consolidated_old_messages_leave_memory(tmp_path: Path) -> None:
    store = SessionStore(tmp_path, tail=10)
    chat(store, "t:1", 100)
    session = store.get("t:1")
    store.mark_consolidated(session, 180)
    assert session.base == 180 and session.total == 200
    assert session.history(10) == [
        {"role": "user", "content": f"q{95 + i // 2}"}
        if i % 2 == 0
        else {"role": "assistant", "content": f"a{95 + i // 2}"}
        for i in range(10)
    ]
    assert session.size < 2000


def test_consolidation_of_an_evicted_session_reaches_the_reloaded_one(tmp_path: Path) -> None:
    store = SessionStore(tmp_path, max_sessions=1)
    chat(store, "t:1", 3)
    old = store.get("t:1")
    chat(store, "t:2", 1)
    current = store.get("t:1")
    assert current is not old
    store.mark_consolidated(old, 4)
    assert current.consolidated == 4

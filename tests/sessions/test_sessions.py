import json
from pathlib import Path

from bot.sessions.safe_history import pair_safe
from bot.sessions.store import SessionStore


def call(call_id: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": "t", "arguments": "{}"}}


def test_messages_survive_a_reload(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.get("test:1")
    store.append(session, [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}])
    store.record_usage(session, 10, 5)
    reloaded = SessionStore(tmp_path).get("test:1")
    assert reloaded.messages == session.messages
    assert (reloaded.prompt_tokens, reloaded.completion_tokens) == (10, 5)


def test_append_adds_lines_without_rewriting(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.get("test:1")
    store.append(session, [{"role": "user", "content": "one"}])
    first = session.path.read_bytes()
    store.append(session, [{"role": "user", "content": "two"}])
    assert session.path.read_bytes().startswith(first)
    assert session.path.stat().st_mode & 0o777 == 0o600


def test_torn_last_line_is_skipped_and_repaired(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.get("telegram:42")
    store.append(session, [{"role": "user", "content": "kept"}])
    with session.path.open("ab") as handle:
        handle.write(b'{"type":"message","message":{"role":"user","con')
    fresh = SessionStore(tmp_path)
    loaded = fresh.get("telegram:42")
    assert loaded.messages == [{"role": "user", "content": "kept"}]
    fresh.append(loaded, [{"role": "user", "content": "after"}])
    lines = loaded.path.read_text().splitlines()
    assert [json.loads(line)["message"]["content"] for line in lines] == ["kept", "after"]


def test_reset_archives_the_file_and_starts_fresh(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.get("test:1")
    store.append(session, [{"role": "user", "content": "old"}])
    archived = store.reset("test:1")
    assert archived.messages == [{"role": "user", "content": "old"}]
    assert archived.path.exists() and "archived" in archived.path.name
    assert store.get("test:1").messages == []
    assert SessionStore(tmp_path).get("test:1").messages == []


def test_history_never_starts_inside_a_tool_exchange(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.get("test:1")
    store.append(
        session,
        [
            {"role": "user", "content": "q1"},
            {"role": "assistant", "content": None, "tool_calls": [call("a"), call("b")]},
            {"role": "tool", "tool_call_id": "a", "content": "ra"},
            {"role": "tool", "tool_call_id": "b", "content": "rb"},
            {"role": "assistant", "content": "done"},
            {"role": "user", "content": "q2"},
            {"role": "assistant", "content": "a2"},
        ],
    )
    history = session.history(limit=4)
    assert history == [{"role": "user", "content": "q2"}, {"role": "assistant", "content": "a2"}]
    assert session.history(limit=7)[1]["tool_calls"][0]["id"] == "a"


def test_unanswered_tool_calls_and_orphan_results_are_dropped() -> None:
    messages = [
        {"role": "user", "content": "q"},
        {"role": "tool", "tool_call_id": "x", "content": "orphan"},
        {"role": "assistant", "content": None, "tool_calls": [call("a"), call("b")]},
        {"role": "tool", "tool_call_id": "a", "content": "only a"},
        {"role": "user", "content": "next"},
    ]
    assert pair_safe(messages) == [{"role": "user", "content": "q"}, {"role": "user", "content": "next"}]


def test_history_skips_consolidated_messages(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.get("test:1")
    store.append(session, [{"role": "user", "content": str(i)} for i in range(6)])
    store.mark_consolidated(session, 4)
    assert [m["content"] for m in SessionStore(tmp_path).get("test:1").history(100)] == ["4", "5"]


def test_a_calls_usage_is_written_before_its_message_in_the_same_write(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.get("test:1")
    store.append(session, [{"role": "user", "content": "q"}])
    size = session.size
    store.append(session, [{"role": "assistant", "content": "a"}], usage=(10, 5))
    records = [json.loads(line) for line in session.path.read_text().splitlines()]
    assert [r["type"] for r in records] == ["message", "usage", "message"]
    assert records[1] == {"type": "usage", "prompt": 10, "completion": 5, "totals": [10, 5]}
    assert session.size - size == len(session.path.read_text().splitlines()[2]) + 1  # message lines alone count
    reloaded = SessionStore(tmp_path).get("test:1")
    assert (reloaded.prompt_tokens, reloaded.completion_tokens, reloaded.total) == (10, 5, 2)

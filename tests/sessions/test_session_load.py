"""A turn's session is read off the event loop: a long chat in the old file format never stalls other chats."""

import asyncio
import json
import threading
import time
from pathlib import Path

import pytest

from bot.sessions import tail as session_tail
from bot.sessions.session import Session
from bot.sessions.store import SessionStore
from tests.fakes.openai_server import FakeLLM
from tests.support.harness import Harness

MESSAGES = 100_000


def old_format_chat(path: Path, messages: int) -> None:
    """A session file as relaybot wrote them before message numbers and running totals."""
    lines = [json.dumps({"type": "message", "message": {"role": "user", "content": f"m{i}"}}) for i in range(messages)]
    lines += [
        json.dumps({"type": "usage", "prompt": 7, "completion": 1}),
        json.dumps({"type": "consolidated", "upto": 9}),
    ]
    path.write_text("\n".join(lines) + "\n")


async def test_a_100k_message_old_format_chat_is_read_in_a_worker_thread(tmp_path: Path) -> None:
    old_format_chat(tmp_path / "t%3A1.jsonl", MESSAGES)
    readers: list[threading.Thread] = []

    def recorded(path: Path, key: str, tail: int) -> tuple[Session, session_tail.Rewrite | None]:
        readers.append(threading.current_thread())
        found, rewrite = session_tail.read_tail_rewriting(path, key, tail)
        assert rewrite is not None  # the old format was rewritten here, in the reading thread
        return found, rewrite

    store = SessionStore(tmp_path, tail=10, read=recorded)
    longest_stall = 0.0

    async def tick() -> None:
        nonlocal longest_stall
        while True:
            before = time.perf_counter()
            await asyncio.sleep(0.001)  # a probe, not a wait: the gap between two ticks is what is measured
            longest_stall = max(longest_stall, time.perf_counter() - before)

    ticker = asyncio.create_task(tick())
    try:
        session = await store.load("t:1")
    finally:
        ticker.cancel()
    assert readers and threading.main_thread() not in readers
    assert session.total == MESSAGES and session.consolidated == 9 and session.prompt_tokens == 7
    assert [m["content"] for m in session.history(2)] == [f"m{MESSAGES - 2}", f"m{MESSAGES - 1}"]
    assert len(session.messages) == 10  # the tail, not the whole chat
    assert longest_stall < 0.25  # generous on a loaded machine; the whole read alone takes longer
    assert await store.load("t:1") is session is store.get("t:1")

    # The file was rewritten in the current format: a fresh process reads only its tail, and agrees.
    first, *_, before_last, last = (tmp_path / "t%3A1.jsonl").read_text().splitlines()
    assert json.loads(first)["n"] == 0 and json.loads(before_last)["totals"] == [7, 1]
    assert json.loads(last) == {"type": "consolidated", "upto": 9}
    again = SessionStore(tmp_path, tail=10).get("t:1")
    assert (again.total, again.consolidated, again.prompt_tokens, again.history(2)) == (
        session.total,
        session.consolidated,
        session.prompt_tokens,
        session.history(2),
    )
    assert len(again.messages) == 10


async def test_a_session_read_by_get_meanwhile_is_the_one_load_returns(tmp_path: Path) -> None:
    old_format_chat(tmp_path / "t%3A1.jsonl", 1_000)
    store = SessionStore(tmp_path, tail=10)
    loading = asyncio.create_task(store.load("t:1"))
    await asyncio.sleep(0)  # the worker thread is reading
    early = store.get("t:1")
    store.append(early, [{"role": "user", "content": "while loading"}])
    assert await loading is early and early.total == 1_001
    lines = (tmp_path / "t%3A1.jsonl").read_text().splitlines()
    assert len(lines) == 1_003 and json.loads(lines[-1])["n"] == 1_000  # the file it grew was kept, not replaced
    assert [p.name for p in tmp_path.iterdir()] == ["t%3A1.jsonl"]


def test_a_rewrite_is_dropped_when_the_file_grew_after_it_was_read(tmp_path: Path) -> None:
    path = tmp_path / "t%3A1.jsonl"
    old_format_chat(path, 3)
    rewrite = session_tail.rewrite_old_format(path, "t:1")
    with path.open("a") as handle:
        handle.write(json.dumps({"type": "message", "n": 3, "message": {"role": "user", "content": "late"}}) + "\n")
    assert not rewrite.commit()
    assert not rewrite.rewritten.exists() and "late" in path.read_text()


def test_recent_messages_of_an_old_format_chat_are_read_from_its_end(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "t%3A1.jsonl"
    old_format_chat(path, 20_000)
    with path.open("r+b") as handle:  # a whole read would log this line; a read from the end never reaches it
        handle.write(b"garbage that is not JSON")
    recent = SessionStore(tmp_path).recent("t:1", 3)
    assert [m["content"] for m in recent] == ["m19997", "m19998", "m19999"]
    assert "unreadable line" not in caplog.text


@pytest.mark.parametrize(("command", "answer"), [("/status", "Session: 1,000 messages"), ("/new", "new conversation")])
async def test_commands_open_an_old_format_chat_off_the_event_loop(
    tmp_path: Path, fake_llm: FakeLLM, command: str, answer: str
) -> None:
    sessions = tmp_path / "state" / "sessions"
    sessions.mkdir(parents=True)
    old_format_chat(sessions / "test%3A1.jsonl", 1_000)
    async with Harness(tmp_path, fake_llm) as bot:
        assert answer in (await bot.ask(command)).replace("1000", "1,000")
    rewritten = next(sessions.glob("test%3A1*.jsonl")).read_text().splitlines()
    assert json.loads(rewritten[0])["n"] == 0  # opened through `load`: the file was rewritten in its thread

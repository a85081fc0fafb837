import random
from pathlib import Path
from typing import Any

from bot.sessions.safe_history import SafeHistory, pair_safe
from bot.sessions.session import Session
from bot.sessions.store import SessionStore


def call(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "t", "arguments": "{}"}}


def random_round(rng: random.Random, n: int) -> list[dict[str, Any]]:
    """A user message and an answer, sometimes with tool rounds, orphan results or results still missing."""
    round_ = [{"role": "user", "content": f"q{n}"}]
    for r in range(rng.randrange(3)):
        ids = [f"c{n}.{r}.{k}" for k in range(rng.randrange(1, 3))]
        round_.append({"role": "assistant", "content": None, "tool_calls": [call(i) for i in ids]})
        answered = ids if rng.random() < 0.8 else ids[:-1]
        round_ += [{"role": "tool", "tool_call_id": i, "content": f"r{i}"} for i in answered]
        if rng.random() < 0.1:
            round_.append({"role": "tool", "tool_call_id": "stray", "content": "orphan"})
    round_.append({"role": "assistant", "content": f"a{n}"})
    return round_


def expected(session: Session, limit: int) -> list[dict[str, Any]]:
    start = max(session.consolidated, session.total - limit, session.base)
    return pair_safe(session.messages[start - session.base :])


def test_history_matches_a_fresh_walk_as_the_session_grows_message_by_message(tmp_path: Path) -> None:
    rng = random.Random(7)
    store = SessionStore(tmp_path, tail=20)
    session = store.get("test:1")
    for n in range(120):
        for message in random_round(rng, n):
            store.append(session, [message])
            limit = rng.choice([5, 20, 100])
            assert session.history(limit) == expected(session, limit)
        if n % 17 == 16:
            store.mark_consolidated(session, session.total - rng.randrange(8))
    assert session.base > 0  # the session was trimmed from the front meanwhile


def test_history_is_a_new_list_each_time() -> None:
    session = Session(key="k", messages=[{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}])
    first = session.history(10)
    first.append({"role": "user", "content": "mine"})
    assert session.history(10) == session.messages


def test_a_round_of_calls_joins_the_history_once_its_results_arrive() -> None:
    session = Session(key="k", messages=[{"role": "user", "content": "q"}])
    session.messages.append({"role": "assistant", "content": None, "tool_calls": [call("a")]})
    assert session.history(10) == [{"role": "user", "content": "q"}]
    session.messages.append({"role": "tool", "tool_call_id": "a", "content": "ra"})
    assert len(session.history(10)) == 3
    session.messages.append({"role": "assistant", "content": "done"})
    assert [m["role"] for m in session.history(10)] == ["user", "assistant", "tool", "assistant"]


def test_messages_read_back_before_the_walk_are_walked_afresh() -> None:
    older = [{"role": "user", "content": "old"}, {"role": "assistant", "content": "was"}]
    session = Session(key="k", messages=[{"role": "user", "content": "new"}], base=2)
    assert session.history(10) == [{"role": "user", "content": "new"}]
    session.messages[:0] = older
    session.base = 0
    assert [m["content"] for m in session.history(10)] == ["old", "was", "new"]


def test_a_session_whose_messages_were_replaced_is_walked_afresh() -> None:
    session = Session(key="k", messages=[{"role": "user", "content": "one"}])
    assert session.history(10)[0]["content"] == "one"
    session.messages = [{"role": "user", "content": "two"}]
    assert session.history(10) == [{"role": "user", "content": "two"}]


def test_what_lies_before_the_session_in_memory_is_forgotten() -> None:
    safe = SafeHistory()
    messages = [{"role": "user", "content": str(i)} for i in range(300)]
    assert len(safe.window(messages, 0, 0)) == 300
    del messages[:200]
    assert safe.window(messages, 200, 250) == messages[50:]
    assert safe.held == 100  # the walked entries before base were dropped


def test_a_new_conversation_starts_with_an_empty_history(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.get("test:1")
    store.append(session, [{"role": "user", "content": "old"}, {"role": "assistant", "content": "was"}])
    assert len(session.history(100)) == 2
    store.reset("test:1")
    fresh = store.get("test:1")
    assert fresh.history(100) == []
    store.append(fresh, [{"role": "user", "content": "new"}])
    assert fresh.history(100) == [{"role": "user", "content": "new"}]

"""Archived sessions read back for recall: only the asking chat's (and its threads'), text messages only."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.agent.sessions.redis_store import RedisSessionStore
from bot.agent.sessions.session import Sessions
from bot.agent.sessions.store import SessionStore
from bot.cluster.redis import RedisState


@pytest.fixture
def shared(redis_url: str) -> Iterator[RedisState]:
    state = RedisState(redis_url, prefix="t")
    yield state
    state.client.close()


def fill(store: Sessions) -> None:
    """Three archived chats (one a neighbour whose id starts the same) and a live session that stays unread."""
    for key, word in [("telegram:1", "pancakes"), ("telegram:1:thread9", "waffles"), ("telegram:12", "secret")]:
        session = store.get(key)
        store.append(session, [{"role": "user", "content": f"recipe for {word}?"}])
        call = {"id": "c1", "type": "function", "function": {"name": "web_search", "arguments": "{}"}}
        store.append(session, [{"role": "assistant", "content": None, "tool_calls": [call]}])
        store.append(session, [{"role": "tool", "tool_call_id": "c1", "name": "web_search", "content": "tool noise"}])
        store.append(session, [{"role": "assistant", "content": f"Here is one for {word}."}])
        store.reset(key)
    store.append(store.get("telegram:1"), [{"role": "user", "content": "live and not archived"}])


BOTH_RECIPES = [
    ("assistant", "Here is one for pancakes."),
    ("assistant", "Here is one for waffles."),
    ("user", "recipe for pancakes?"),
    ("user", "recipe for waffles?"),
]
"""What `fill` archives for telegram:1 and its thread, sorted; never the other chat's."""


def texts(store: Sessions) -> list[tuple[str, str]]:
    return [(role, text) for _, role, text in store.archived_messages("telegram:1")]


def test_local_archives_of_the_chat_and_its_threads_are_read_and_no_other_chat(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    fill(store)
    assert sorted(texts(store)) == BOTH_RECIPES
    assert all(ts > 0 for ts, _, _ in store.archived_messages("telegram:1"))


def test_redis_archives_of_the_chat_and_its_threads_are_read_and_no_other_chat(shared: RedisState) -> None:
    store = RedisSessionStore(shared)
    fill(store)
    assert sorted(texts(store)) == BOTH_RECIPES

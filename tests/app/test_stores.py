"""Every store the composition root hands out keeps one contract on both backends: files here, or Redis."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bot.access.flood import Verdict
from bot.app.backend import stores_for
from bot.app.local_stores import LocalStores
from bot.app.redis_stores import RedisStores
from bot.app.stores import Stores
from bot.bus import ChatRef, InboundMessage, Trust
from bot.config.schema import Config
from bot.usage.ledger import CallRecord

MakeStores = Callable[[], Stores]


def config_for(tmp_path: Path, bus: dict[str, Any]) -> Config:
    return Config.model_validate(
        {
            "workspace": tmp_path / "workspace",
            "state_dir": tmp_path / "state",
            "bus": bus,
            "access": {"rate_limit": 3},
        }
    )


@pytest_asyncio.fixture(params=["local", "redis"])
async def make_stores(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[MakeStores]:
    """Makes stores for one bot; each call is another process's view of the same state."""
    bus: dict[str, Any] = {"backend": "local"}
    if request.param == "redis":
        bus = {"backend": "redis", "url": request.getfixturevalue("redis_url"), "prefix": "contract"}
    config = config_for(tmp_path, bus)
    made: list[Stores] = []

    def make() -> Stores:
        made.append(stores_for(config))
        return made[-1]

    yield make
    for stores in made:
        await stores.aclose()


def test_the_backend_is_the_one_the_config_names(tmp_path: Path) -> None:
    assert isinstance(stores_for(config_for(tmp_path, {"backend": "local"})), LocalStores)
    redis = config_for(tmp_path, {"backend": "redis", "url": "redis://127.0.0.1:1/0"})
    assert isinstance(stores_for(redis), RedisStores)


async def test_a_turn_appended_to_a_session_is_loaded_by_another_process(make_stores: MakeStores) -> None:
    writer = make_stores().sessions()
    session = writer.get("telegram:42")
    writer.append(session, [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}], ["m1"])
    loaded = await make_stores().sessions().load("telegram:42")
    assert [m["content"] for m in loaded.messages] == ["q", "a"]


def owner_message(chat: str, direct: bool = True) -> InboundMessage:
    return InboundMessage(ChatRef("telegram", chat), sender_id=chat, text="hi", trust=Trust.OWNER, is_direct=direct)


def test_the_owners_latest_direct_chat_is_seen_by_another_process(make_stores: MakeStores) -> None:
    noted = make_stores().owner_dm()
    assert make_stores().owner_dm().chat is None
    noted.note(owner_message("42"))
    noted.note(owner_message("-100", direct=False))  # a group never counts
    assert make_stores().owner_dm().chat == ChatRef("telegram", "42")


def test_a_code_requested_in_one_process_is_approved_in_another(make_stores: MakeStores) -> None:
    code, new = make_stores().pairing().request("telegram", "77", "Ann")
    assert new
    assert make_stores().pairing().request("telegram", "77", "Ann") == (code, False)
    assert make_stores().pairing().approve("telegram", code) == "77"
    assert make_stores().pairing().is_approved("telegram", "77")
    assert make_stores().pairing().revoke("telegram", "77")
    assert not make_stores().pairing().is_approved("telegram", "77")


def test_a_sender_past_the_rate_limit_is_dropped_with_one_notice(make_stores: MakeStores) -> None:
    limit = make_stores().rate_limit()
    message = InboundMessage(ChatRef("telegram", "-100"), sender_id="7", text="hi", trust=Trust.GUEST)
    verdicts = [limit.check(message) for _ in range(5)]
    assert verdicts == [Verdict.PASS] * 3 + [Verdict.DROP_AND_NOTIFY, Verdict.DROP]


def test_an_ignored_sender_is_noted_once(make_stores: MakeStores) -> None:
    notices = make_stores().ignore_notices()
    assert notices.first("telegram", "9")
    assert not notices.first("telegram", "9")
    assert notices.first("telegram", "10")


def test_a_model_call_recorded_in_one_process_is_counted_in_another(make_stores: MakeStores) -> None:
    call = CallRecord(1000.0, "telegram:42", "42", "chat", "openai/x", 10, 5, 0, 0.01, False, 0.2, "ok")
    writer = make_stores().ledger()
    writer.record(call)
    writer.close()
    reader = make_stores().ledger()
    assert [(c.session_key, c.prompt_tokens, c.completion_tokens) for c in reader.calls()] == [("telegram:42", 10, 5)]
    reader.close()


def test_the_heartbeats_last_run_is_kept(make_stores: MakeStores) -> None:
    record = make_stores().heartbeat_record()
    assert record.last() is None
    record.save(1000.0, "silent")
    assert record.last() == (1000.0, "silent")


def test_a_chats_settings_set_in_one_process_are_read_in_another(make_stores: MakeStores) -> None:
    settings = make_stores().chat_settings()
    assert settings.get("telegram:-100").activation is None
    settings.update("telegram:-100", activation="always")
    changed = settings.update("telegram:-100", model="fast")
    assert (changed.activation, changed.model) == ("always", "fast")
    reader = make_stores().chat_settings()
    assert reader.get("telegram:-100").model == "fast"
    reader.update("telegram:-100", model=None)  # back to the config's choice
    assert settings.get("telegram:-100").model is None
    assert settings.get("telegram:-100").activation == "always"
    assert settings.get("telegram:42").activation is None

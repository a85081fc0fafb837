"""Tokens: wrong ones get 401, an address that keeps guessing gets 429 for a minute, remote binds need consent."""

from __future__ import annotations

import logging

import aiohttp
import pytest

from bot.bus import Trust
from bot.config.channels.api import ApiConfig, ApiTokenConfig
from bot.config.loader import load_config
from bot.errors import ConfigError
from channels.api.web.auth import FailureLockout, TokenBook
from tests.channels.api.conftest import GUEST_TOKEN, OWNER_TOKEN, ApiBot, bearer


def test_lockout_after_five_failures_within_a_minute_lasts_a_minute() -> None:
    now = [0.0]
    lockout = FailureLockout(clock=lambda: now[0])
    for _ in range(4):
        lockout.failed("10.0.0.1")
    assert not lockout.locked("10.0.0.1")
    lockout.failed("10.0.0.1")
    assert lockout.locked("10.0.0.1") and not lockout.locked("10.0.0.2")
    now[0] = 59.0
    assert lockout.locked("10.0.0.1")
    now[0] = 60.5
    assert not lockout.locked("10.0.0.1")


def test_failures_spread_over_more_than_a_minute_never_lock() -> None:
    now = [0.0]
    lockout = FailureLockout(clock=lambda: now[0])
    for _ in range(10):
        lockout.failed("10.0.0.1")
        now[0] += 20.0
    assert not lockout.locked("10.0.0.1")


def test_token_book_maps_tokens_to_callers_and_ignores_empty_tokens() -> None:
    book = TokenBook(
        [
            ApiTokenConfig(token="", name="unset"),
            ApiTokenConfig(token="a", name="me", trust="owner"),
            ApiTokenConfig(token="b", name="pal", trust="guest"),
        ]
    )
    assert book.caller("") is None and book.caller("c") is None
    me, pal = book.caller("a"), book.caller("b")
    assert me and me.name == "me" and me.trust is Trust.OWNER and me.is_owner
    assert pal and pal.trust is Trust.GUEST and not pal.is_owner


def test_remote_bind_needs_allow_remote(tmp_path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("channels:\n  api:\n    host: 0.0.0.0\n")
    with pytest.raises(ConfigError, match="channels.api.*allow_remote"):
        load_config(path, env={})
    assert ApiConfig(host="0.0.0.0", allow_remote=True).allow_remote
    assert ApiConfig(host="::1").host == "::1"


async def test_remote_bind_logs_a_warning(tmp_path, fake_llm, caplog) -> None:
    from bot.events import EventBus
    from channels.api.channel import ApiChannel

    async def publish(message) -> None: ...

    channel = ApiChannel(publish, ApiConfig(host="127.0.0.2", port=0, allow_remote=True), EventBus())
    with caplog.at_level(logging.WARNING):
        await channel.start()
    await channel.stop()
    assert any("reachable from other machines" in r.message for r in caplog.records)


async def test_wrong_tokens_get_401_then_429_for_the_address(api_bot: ApiBot) -> None:
    async with aiohttp.ClientSession() as http:
        for _ in range(5):
            async with http.get(f"{api_bot.url}/v1/models", headers={"Authorization": "Bearer nope"}) as response:
                assert response.status == 401
        async with http.get(f"{api_bot.url}/v1/models", headers=bearer(OWNER_TOKEN)) as response:
            assert response.status == 429


async def test_no_data_without_a_token(api_bot: ApiBot) -> None:
    async with aiohttp.ClientSession() as http:
        for path in ("/v1/models", "/history"):
            async with http.get(f"{api_bot.url}{path}") as response:
                assert response.status == 401
        async with http.get(f"{api_bot.url}/history", headers=bearer(GUEST_TOKEN)) as response:
            assert response.status == 200
            assert await response.json() == {"session": "default", "messages": []}

"""The shared Redis connection: keys under the prefix, both clients on one server."""

from __future__ import annotations

from bot.cluster.redis import RedisState


async def test_both_clients_reach_one_server_under_the_prefix(redis_url: str) -> None:
    state = RedisState(redis_url, prefix="bot-a")
    assert state.key("pairing", "telegram") == "bot-a:pairing:telegram"
    state.client.set(state.key("x"), "1")
    assert await state.aclient.get("bot-a:x") == "1"
    await state.aclose()
    assert state.client.get("bot-a:x") == "1"
    state.client.close()

"""The redis bus's client: a dropped connection is made again."""

from __future__ import annotations

from bot.bus.redis.connection import connect


async def test_a_connection_the_server_dropped_is_made_again_for_the_next_command(redis_url: str) -> None:
    client = connect(redis_url)
    admin = connect(redis_url)
    await client.client_setname("dropped")
    await admin.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
    await client.set("conn:after", "1")  # the send or its read fails on the dead socket; the retry reconnects
    assert await admin.get("conn:after") == "1"
    await client.aclose()
    await admin.aclose()

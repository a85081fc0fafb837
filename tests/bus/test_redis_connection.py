"""The redis bus's client: sends without a task of their own, and a dropped connection is made again."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Generator
from typing import Any

from bot.bus.redis.connection import bounded_send_connection, connect


async def test_commands_on_a_connected_socket_are_sent_without_a_task_of_their_own(redis_url: str) -> None:
    client = connect(redis_url)
    await client.set("conn:k", "0")  # connects (and says HELLO) through the library's own path
    loop = asyncio.get_running_loop()
    made: list[str] = []

    def counting(loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, Any] | Generator[Any, None, Any]) -> Any:
        made.append(getattr(coro, "__qualname__", repr(coro)))
        return asyncio.Task(coro, loop=loop)

    loop.set_task_factory(counting)
    try:
        for n in range(20):
            await client.set("conn:k", str(n))
            async with client.pipeline(transaction=True) as pipe:
                pipe.incr("conn:n")
                pipe.expire("conn:n", 60)
                await pipe.execute()
    finally:
        loop.set_task_factory(None)
    assert [name for name in made if "send" in name] == []  # the library's own sends run each in a task
    assert await client.get("conn:k") == "19" and await client.get("conn:n") == "20"
    pool = client.connection_pool
    assert pool.connection_class is bounded_send_connection()
    await client.aclose()


async def test_a_connection_the_server_dropped_is_made_again_for_the_next_command(redis_url: str) -> None:
    client = connect(redis_url)
    admin = connect(redis_url)
    await client.client_setname("dropped")
    await admin.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
    await client.set("conn:after", "1")  # the send or its read fails on the dead socket; the retry reconnects
    assert await admin.get("conn:after") == "1"
    await client.aclose()
    await admin.aclose()

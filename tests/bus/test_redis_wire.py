"""The lean wires: replies matched in order, scripts loaded on NOSCRIPT, a dropped connection falls back."""

from __future__ import annotations

import asyncio

import pytest
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeout

from bot.bus.redis.connection import connect
from bot.bus.redis.wire import AsyncWire, AsyncWiredScript, SyncWire, WireDown, wire_target

ECHO = "return {KEYS[1], ARGV[1]}"


async def test_concurrent_calls_on_one_async_wire_each_get_their_own_reply(redis_url: str) -> None:
    wire = AsyncWire(redis_url, 5.0)
    replies = await asyncio.gather(*(wire.call("ECHO", f"m{n}") for n in range(50)))
    assert replies == [f"m{n}" for n in range(50)]
    wire.close()


async def test_a_script_is_loaded_on_noscript_and_a_script_error_is_raised_as_redis_py_raises_it(
    redis_url: str,
) -> None:
    client = connect(redis_url)
    wire = AsyncWire(redis_url, 5.0)
    echo = AsyncWiredScript(ECHO, wire, client.register_script(ECHO))
    await client.script_flush()
    assert await echo(keys=["k"], args=["é"]) == ["k", "é"]  # NOSCRIPT, loaded over the wire, run again
    incr = "return redis.call('INCR', KEYS[1])"
    failing = AsyncWiredScript(incr, wire, client.register_script(incr))
    await client.set("text", "x")
    with pytest.raises(ResponseError, match="not an integer"):
        await failing(keys=["text"], args=[])
    assert await wire.call("ECHO", "still in step") == "still in step"
    wire.close()
    await client.aclose()


async def test_a_dropped_async_wire_sends_through_redis_py_and_connects_again(redis_url: str) -> None:
    client = connect(redis_url)
    wire = AsyncWire(redis_url, 5.0)
    echo = AsyncWiredScript(ECHO, wire, client.register_script(ECHO))
    assert await echo(keys=["a"], args=["1"]) == ["a", "1"]
    await client.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")  # the wire's connection too
    assert await echo(keys=["b"], args=["2"]) == ["b", "2"]  # the wire fails, redis-py answers
    assert await wire.call("ECHO", "back") == "back"
    wire.close()
    await client.aclose()


@pytest.mark.slow
async def test_an_async_wire_that_gets_no_reply_in_time_times_out_at_once_and_connects_again(redis_url: str) -> None:
    client = connect(redis_url)
    wire = AsyncWire(redis_url, 0.2)
    await wire.call("PING")
    await client.execute_command("CLIENT", "PAUSE", 600, "ALL")
    with pytest.raises(RedisTimeout):
        await wire.call("PING")
    probe = connect(redis_url, timeout=30)
    await probe.ping()  # waits behind CLIENT PAUSE like every command: it answers once the pause is over
    await probe.aclose()
    assert await wire.call("ECHO", "after") == "after"
    wire.close()
    await client.aclose()


def test_a_sync_wire_selects_the_urls_database_and_reconnects_after_a_drop(redis_url: str) -> None:
    import redis

    url = redis_url.rsplit("/", 1)[0] + "/5"
    wire = SyncWire(url, 5.0)
    assert wire.call("SET", "wire:k", "v") == "OK"
    direct = redis.Redis.from_url(url, decode_responses=True)
    assert direct.get("wire:k") == "v"
    direct.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
    with pytest.raises(WireDown):
        wire.call("GET", "wire:k")
    assert wire.call("GET", "wire:k") == "v"
    with pytest.raises(ResponseError):
        wire.call("INCR", "wire:k")
    direct.close()
    wire.close()


def test_only_plain_tcp_urls_get_a_wire() -> None:
    assert wire_target("redis://u:p@h:7/2") == {"host": "h", "port": 7, "db": 2, "username": "u", "password": "p"}
    assert wire_target("rediss://h:7/0") is None
    assert wire_target("unix:///tmp/redis.sock") is None


async def test_a_posted_command_runs_before_the_next_one_and_its_error_is_logged(
    redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    wire = AsyncWire(redis_url, 5.0)
    assert not wire.post("SET", "posted", "1"), "not connected yet: the caller sends it the usual way"
    await wire.call("PING")
    assert wire.post("INCR", "posted")
    assert wire.post("HSET", "posted", "f", "v")  # a reply error: logged, nobody waits for it
    assert await wire.call("GET", "posted") == "1"  # the INCR ran first
    assert "a command sent without waiting failed (ResponseError: WRONGTYPE" in caplog.text
    wire.close()

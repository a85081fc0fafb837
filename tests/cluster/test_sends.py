"""The stores' sends: a deferred write rides with the next command, in order, and is never left behind."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from bot.bus.redis.wire import SyncWire
from bot.cluster.redis import RedisState

INCR = "return redis.call('INCRBY', KEYS[1], ARGV[1])"


class CountingWire(SyncWire):
    """A wire that counts its round trips."""

    trips = 0

    def exchange(self, commands: Any) -> list[Any]:
        CountingWire.trips += 1
        return super().exchange(commands)


@pytest.fixture
def state(redis_url: str) -> RedisState:
    CountingWire.trips = 0
    return RedisState(redis_url, "t", wire=CountingWire)


async def test_deferred_writes_go_out_with_the_next_command_in_one_round_trip_in_order(state: RedisState) -> None:
    totals: list[int] = []
    state.defer("SET", "t:k", "1")
    state.script(INCR).defer(keys=["t:k"], args=[5], on_reply=totals.append)
    assert CountingWire.trips == 0
    assert state.command("GET", "t:k") == "6"
    assert CountingWire.trips == 1
    assert totals == [6]


async def test_a_deferred_write_with_nothing_after_it_goes_when_the_loop_next_runs(state: RedisState) -> None:
    state.defer("SET", "t:alone", "1")
    assert CountingWire.trips == 0
    await asyncio.sleep(0)
    assert CountingWire.trips == 1
    assert state.command("GET", "t:alone") == "1"


def test_a_read_through_the_redis_py_client_sees_the_deferred_writes(state: RedisState) -> None:
    async def in_a_loop() -> None:  # with a loop running the write waits for the timer; the client sends it first
        state.defer("SET", "t:seen", "yes")
        assert state.client.get("t:seen") == "yes"

    asyncio.run(in_a_loop())


def test_a_failed_deferred_write_is_logged_and_the_command_after_it_answered(
    state: RedisState, caplog: pytest.LogCaptureFixture
) -> None:
    state.command("SET", "t:text", "x")
    state.defer("INCR", "t:text")
    assert state.command("ECHO", "fine") == "fine"
    assert "a deferred INCR failed (ResponseError" in caplog.text


async def test_when_the_wire_drops_the_deferred_write_and_the_command_go_through_redis_py(state: RedisState) -> None:
    state.command("PING")
    state.client.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")  # the wire's connection
    state.defer("SET", "t:after", "1")
    assert state.command("GET", "t:after") == "1"
    assert state.command("ECHO", "wire again") == "wire again"


async def test_a_script_the_server_lost_runs_from_its_source(
    state: RedisState, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    incr = state.script(INCR)
    assert incr(keys=["t:n"], args=[1]) == 1
    state.command("SCRIPT", "FLUSH")
    incr.defer(keys=["t:n"], args=[2])
    assert incr(keys=["t:n"], args=[3]) == 6  # the deferred write ran again from its source, before this one
    assert "deferred" not in caplog.text

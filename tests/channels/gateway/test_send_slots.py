"""The send slots: a bound on sends in flight, where a retry is served before first attempts."""

import asyncio

from channels.gateway.send_slots import SendSlots
from tests.support.polling import until


async def test_a_waiting_retry_takes_the_next_free_slot_before_earlier_first_attempts() -> None:
    slots, order, gate = SendSlots(1), [], asyncio.Event()

    async def send(name: str, retry: bool = False, until: asyncio.Event | None = None) -> None:
        async with slots.slot(retry):
            order.append(name)
            if until is not None:
                await until.wait()

    holder = asyncio.create_task(send("holder", until=gate))
    await until(lambda: order == ["holder"], timeout=5)
    firsts = [asyncio.create_task(send(name)) for name in ("b1", "c1")]
    await until(lambda: slots.waiting == 2, timeout=5)
    retry = asyncio.create_task(send("a1 again", retry=True))
    await until(lambda: slots.waiting == 3, timeout=5)
    assert order == ["holder"]
    gate.set()
    await asyncio.gather(holder, *firsts, retry)
    assert order == ["holder", "a1 again", "b1", "c1"]


async def test_a_cancelled_waiter_leaves_its_place_and_no_slot_is_lost() -> None:
    slots, gate = SendSlots(1), asyncio.Event()

    async def hold() -> None:
        async with slots.slot():
            await gate.wait()

    holder = asyncio.create_task(hold())
    gone = asyncio.create_task(hold())
    await until(lambda: slots.waiting == 1, timeout=5)  # the holder has the slot, `gone` waits for it
    gone.cancel()
    await asyncio.gather(gone, return_exceptions=True)
    gate.set()
    await holder
    async with asyncio.timeout(1):  # the slot came back: one more holder gets it at once
        async with slots.slot():
            pass
    async with asyncio.timeout(1):
        async with slots.slot(retry=True):
            pass

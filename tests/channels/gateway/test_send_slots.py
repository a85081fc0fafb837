"""The send slots: a bound on sends in flight, where the oldest waiting reply is served first."""

import asyncio

from channels.gateway.send_slots import SendSlots
from tests.support.polling import until


async def test_the_oldest_waiting_reply_takes_the_next_free_slot_whatever_order_they_asked_in() -> None:
    slots, order, gate = SendSlots(1), [], asyncio.Event()

    async def send(name: str, queued_at: float, until: asyncio.Event | None = None) -> None:
        async with slots.slot(queued_at):
            order.append(name)
            if until is not None:
                await until.wait()

    holder = asyncio.create_task(send("holder", 0.0, until=gate))
    await until(lambda: order == ["holder"], timeout=5)
    waiters = []
    for n, (name, queued_at) in enumerate((("b1", 3.0), ("c1", 2.0), ("a2", 1.0), ("d1", 3.0)), start=1):
        waiters.append(asyncio.create_task(send(name, queued_at)))
        await until(lambda n=n: slots.waiting == n, timeout=5)
    assert order == ["holder"]
    gate.set()
    await asyncio.gather(holder, *waiters)
    assert order == ["holder", "a2", "c1", "b1", "d1"]  # by age; of two the same age, the one that asked first


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
        async with slots.slot(queued_at=5.0):
            pass

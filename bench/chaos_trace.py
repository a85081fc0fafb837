"""Where a chaos run's last replies spent their time: each reply's path from its turn's end to Telegram, by cause.

Used by `bench/chaos.py --trace`: it wraps the outbox's steps (queued, a send started, a send slot taken, the
outcome) to note their times, and prints the chats of the last replies with every wait named: queued behind the
chat's earlier replies, waiting for a send slot, a 429's retry_after, the backoff after a 5xx or a dropped
connection.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from bot.bus import OutboundMessage
from channels.gateway import outbound, presence, send_slots


@dataclass
class Reply:
    """One outbound message's steps, in seconds since the run's start."""

    chat: str
    turn: str | None
    queued: float
    tries: list[tuple[float, float, float, float, str]] = field(default_factory=list)  # start, live, slot, end, outcome
    ended: float | None = None  # its turn's end

    @property
    def sent(self) -> float | None:
        """When its last try succeeded."""
        return self.tries[-1][3] if self.tries and self.tries[-1][4] == "sent" else None


class SendTrace:
    """Notes each reply's steps while installed."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.replies: dict[str, Reply] = {}
        self._slot_at: dict[str, float] = {}  # task name -> when its latest slot was taken
        self._live_at: dict[str, float] = {}  # task name -> when its latest live reply was finished
        self._ended: dict[str, float] = {}  # turn id -> when it ended

    def now(self) -> float:
        """Seconds since the run's start."""
        return time.perf_counter() - self.started

    @contextmanager
    def installed(self) -> Iterator[SendTrace]:
        """Wrap the outbox's submit and send, and the slots' acquire, for the block."""
        trace = self
        submit, send_once, acquire, finish_live = (
            outbound.ChannelOutbox.submit,
            outbound.ChannelOutbox._send_once,
            send_slots.SendSlots._acquire,
            presence.Presence.finish_live,
        )

        def traced_submit(outbox: Any, message: OutboundMessage) -> None:
            trace.replies.setdefault(message.id, Reply(message.chat.session_key, message.in_reply_to, trace.now()))
            submit(outbox, message)

        async def traced_send_once(outbox: Any, message: OutboundMessage, *args: Any) -> None:
            start = trace.now()
            name = _task_name()
            trace._slot_at.pop(name, None)
            trace._live_at.pop(name, None)
            outcome = "sent"
            try:
                await send_once(outbox, message, *args)
            except BaseException as exc:
                outcome = type(exc).__name__
                raise
            finally:
                live = trace._live_at.pop(name, start)
                slot = trace._slot_at.pop(name, live)
                trace.replies[message.id].tries.append((start, live, slot, trace.now(), outcome))

        async def traced_acquire(slots: Any, *args: Any) -> None:
            await acquire(slots, *args)
            trace._slot_at[_task_name()] = trace.now()

        async def traced_finish_live(owner: Any, message: OutboundMessage) -> bool:
            try:
                return await finish_live(owner, message)
            finally:
                trace._live_at[_task_name()] = trace.now()

        outbound.ChannelOutbox.submit = traced_submit  # type: ignore[method-assign]
        outbound.ChannelOutbox._send_once = traced_send_once  # type: ignore[method-assign]
        send_slots.SendSlots._acquire = traced_acquire  # type: ignore[method-assign]
        presence.Presence.finish_live = traced_finish_live  # type: ignore[method-assign]
        try:
            yield self
        finally:
            outbound.ChannelOutbox.submit = submit  # type: ignore[method-assign]
            outbound.ChannelOutbox._send_once = send_once  # type: ignore[method-assign]
            send_slots.SendSlots._acquire = acquire  # type: ignore[method-assign]
            presence.Presence.finish_live = finish_live  # type: ignore[method-assign]

    def note_turn_ended(self, turn: str) -> None:
        """A turn ended now (its reply is submitted after)."""
        self._ended[turn] = self.now()

    def causes(self, reply: Reply) -> dict[str, float]:
        """The reply's time from its turn's end to Telegram, split by cause."""
        split: dict[str, float] = defaultdict(float)
        ended = self._ended.get(reply.turn or "", reply.queued)
        split["turn end → queued"] += reply.queued - ended
        previous_end, previous_outcome = reply.queued, ""
        for start, live, slot, end, outcome in reply.tries:
            gap = start - previous_end
            if previous_outcome == "":
                split["behind the chat's earlier replies"] += gap
            elif previous_outcome == "RateLimited":
                split["429 retry_after"] += gap
            else:
                split[f"backoff after {previous_outcome}"] += gap
            split["finishing the live reply"] += live - start
            split["waiting for a send slot"] += slot - live
            split["sending" if outcome == "sent" else f"failed send ({outcome})"] += end - slot
            previous_end, previous_outcome = end, outcome
        return dict(split)

    def report(self, last: int = 3) -> list[str]:
        """The last `last` replies to reach Telegram, their cause split, and their chats' timelines."""
        sent = sorted((r for r in self.replies.values() if r.sent is not None), key=lambda r: r.sent or 0.0)
        if not sent:
            return ["  (no replies traced)"]
        lines = [f"  last turn ended {max(self._ended.values(), default=0):.2f}s, last reply {sent[-1].sent:.2f}s"]
        totals: dict[str, float] = defaultdict(float)
        for reply in sent:
            for name, seconds in self.causes(reply).items():
                totals[name] += seconds
        lines.append("  every reply, mean s: " + ", ".join(f"{k} {v / len(sent):.3f}" for k, v in totals.items() if v))
        shown: set[str] = set()
        for reply in reversed(sent[-last:]):
            causes = ", ".join(f"{name} {seconds:.2f}s" for name, seconds in self.causes(reply).items() if seconds)
            lines.append(f"  reply at {reply.sent:.2f}s in {reply.chat}: {causes}")
            if reply.chat in shown:
                continue
            shown.add(reply.chat)
            for other in sorted((r for r in self.replies.values() if r.chat == reply.chat), key=lambda r: r.queued):
                if shown != {sent[-1].chat} and (other.sent or 0.0) < (reply.sent or 0.0) - 3.0:
                    continue
                ended = self._ended.get(other.turn or "")
                steps = " ".join(
                    f"[try {start:.2f} live+{live - start:.2f} slot+{slot - live:.2f} {outcome}@{end:.2f}]"
                    for start, live, slot, end, outcome in other.tries
                )
                turn = f"turn end {ended:.2f} " if ended is not None else ""
                lines.append(f"    {turn}queued {other.queued:.2f} {steps}")
        return lines


def _task_name() -> str:
    task = asyncio.current_task()
    return task.get_name() if task else ""

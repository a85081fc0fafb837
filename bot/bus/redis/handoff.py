"""A worker's handoff stream: inbox entries other workers passed to it because its turn holds their session.

An entry of a session whose turn runs on worker A may be read by worker B. B's admission moves the
entry to A in the inbox group's pending list and announces it here (see ADMIT); A reads this stream in
the same blocking read as the inbox, so the entry reaches A's running turn at once: /stop, /approve,
/deny and steering work as on one process. The inbox's pending list stays the truth: an announcement
lost to an outage is recovered by the holder's next fresh read of its own pending entries, and a
holder that dies leaves the entry to be claimed like any other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.bus.messages import InboundMessage, inbound_from_json
from bot.bus.redis.connection import StreamRead

if TYPE_CHECKING:
    from redis.asyncio import Redis


@dataclass(frozen=True, slots=True)
class ReadEntry:
    """One inbox entry as a worker read it: directly, claimed from an idle worker, or handed over."""

    entry: str
    session: str
    message: InboundMessage
    claimed: bool = False


class HandoffStream:
    """The stream, named after this worker, on which others announce handed entries; it lives while renewed."""

    def __init__(self, redis: Redis, prefix: str, consumer: str, group: str, ttl_ms: int) -> None:
        self.prefix = prefix
        self.key = prefix + consumer
        self._redis = redis
        self._group = group
        self._ttl_ms = ttl_ms

    async def open(self) -> None:
        """Create the stream and its group (idempotent); from now on other workers hand entries here."""
        from redis.exceptions import ResponseError

        try:
            await self._redis.xgroup_create(self.key, self._group, id="$", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise
        await self.keep_alive()

    async def keep_alive(self) -> None:
        """Push the stream's expiry out: a worker that dies stops receiving handoffs once it lapses."""
        await self._redis.pexpire(self.key, self._ttl_ms)

    async def close(self) -> None:
        """Stop receiving handoffs (a stop); entries already handed stay pending on this worker until claimed."""
        await self._redis.delete(self.key)

    async def take(self, response: StreamRead, inbox: str) -> list[ReadEntry]:
        """The entries of one XREADGROUP over the inbox and this stream; announcements are acknowledged and dropped."""
        read, announced = read_entries(response, inbox)
        if announced:
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.xack(self.key, self._group, *announced)
                pipe.xdel(self.key, *announced)
                await pipe.execute()
        return read


def read_entries(response: StreamRead, inbox: str) -> tuple[list[ReadEntry], list[str]]:
    """Inbox entries from a stream read (inbox entries as they are, handoff announcements by the entry they name).

    Also returns the announcements' own ids; an entry deleted meanwhile (no fields) is skipped.
    """
    read: list[ReadEntry] = []
    announced: list[str] = []
    for stream, entries in response.items() if isinstance(response, dict) else response or ():
        for entry, fields in entries:
            if not fields:
                continue
            message = inbound_from_json(fields["body"])
            if stream == inbox:
                read.append(ReadEntry(entry, fields["session"], message))
            else:
                announced.append(entry)
                read.append(ReadEntry(fields["entry"], fields["session"], message, fields["claimed"] == "1"))
    return read, announced

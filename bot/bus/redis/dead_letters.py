"""Dead letters on the redis bus: one hash (`dead`) of every failed message, so any process of the bot lists them.

A retry puts the message back on its stream as a new entry: an inbound message on the inbox (in its session's
order, its crash count reset), a reply on its channel's outbox (after the chunks already confirmed). Both are
one atomic step (a script or a MULTI transaction), so a retry is journaled whole or not at all.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from bot.bus.dead_letters import DeadLetter, Direction
from bot.bus.messages import (
    InboundMessage,
    OutboundMessage,
    inbound_from_json,
    inbound_to_json,
    outbound_from_json,
    outbound_to_json,
)
from bot.bus.redis.connection import StreamScope, as_text

RETRY_INBOUND = """
-- Put a dead inbound message back at the end of the inbox and of its session's order, its crash count reset.
-- KEYS: inbox stream, session pending zset, sequence counter, start counter, dead hash. ARGV: session, body, id
local seq = redis.call('INCR', KEYS[3])
local entry = redis.call('XADD', KEYS[1], '*', 'session', ARGV[1], 'body', ARGV[2])
redis.call('ZADD', KEYS[2], seq, entry)
redis.call('DEL', KEYS[4])
redis.call('HDEL', KEYS[5], ARGV[3])
return 1
"""


class RedisDeadLetters:
    """Records failed messages in the `dead` hash and lists, retries and drops them."""

    def __init__(self, scope: StreamScope, clock: Callable[[], float] = time.time) -> None:
        self._scope = scope
        self._clock = clock
        self._listeners: list[Callable[[InboundMessage, str], None]] = []

    def on_inbound_failed(self, listener: Callable[[InboundMessage, str], None]) -> None:
        self._listeners.append(listener)

    @property
    def hash(self) -> str:
        """The key of the hash: message id -> its record (direction, body, when, attempts, reason)."""
        return self._scope.key("dead")

    async def record(self, direction: Direction, body: str, message_id: str, reason: str, attempts: int) -> None:
        """Keep a failed message (by id, so twice is once) with why it failed."""
        record = {"direction": direction, "body": body, "when": self._clock(), "attempts": attempts, "reason": reason}
        await self._scope.redis.hset(self.hash, message_id, json.dumps(record))

    async def record_inbound(self, message: InboundMessage, reason: str, attempts: int) -> None:
        """Keep an inbound message that failed for good, and tell the listeners."""
        await self.record("in", inbound_to_json(message), message.id, reason, attempts)
        for listener in self._listeners:
            listener(message, reason)

    async def record_outbound(self, message: OutboundMessage, reason: str, attempts: int) -> None:
        """Keep a reply that could not be delivered."""
        await self.record("out", outbound_to_json(message), message.id, reason, attempts)

    async def _records(self) -> dict[str, dict[str, Any]]:
        raw = await self._scope.redis.hgetall(self.hash)
        return {as_text(key): json.loads(as_text(value)) for key, value in raw.items()}

    async def counts(self) -> tuple[int, int, float | None]:
        """Waiting dead letters: inbound, outbound, and when the oldest failed."""
        records = list((await self._records()).values())
        inbound = sum(1 for record in records if record["direction"] == "in")
        oldest = min((float(record["when"]) for record in records), default=None)
        return inbound, len(records) - inbound, oldest

    async def letters(self, chat: str | None = None) -> list[DeadLetter]:
        """Every dead letter, oldest first, optionally of one chat."""
        letters = []
        for message_id, record in (await self._records()).items():
            message: InboundMessage | OutboundMessage
            if record["direction"] == "in":
                message = inbound_from_json(record["body"])
            else:
                message = outbound_from_json(record["body"])
            when, attempts = float(record["when"]), int(record["attempts"])
            letters.append(
                DeadLetter(
                    message_id, record["direction"], message.chat, when, attempts, record["reason"], message.text
                )
            )
        letters.sort(key=lambda letter: letter.when)
        return [letter for letter in letters if chat is None or letter.chat.session_key == chat]

    async def retry(self, ids: Sequence[str]) -> list[str]:
        """Put these dead letters back on the inbox or their channel's outbox stream; the ids that were dead letters."""
        key = self._scope.key
        inbox = key("inbox")
        records = await self._records()
        revived = []
        for message_id in ids:
            record = records.get(message_id)
            if record is None:
                continue
            if record["direction"] == "in":
                session = inbound_from_json(record["body"]).chat.session_key
                keys = [inbox, key("pending", session), key("seq"), key("starts", message_id), self.hash]
                await self._scope.script(RETRY_INBOUND)(keys=keys, args=[session, record["body"], message_id])
            else:
                reply = outbound_from_json(record["body"])
                async with self._scope.redis.pipeline(transaction=True) as pipe:
                    pipe.hset(key("out", message_id), mapping={"state": "pending", "error": ""})
                    pipe.xadd(key("outbox", reply.chat.channel_key), {"id": message_id, "body": record["body"]})
                    pipe.hdel(self.hash, message_id)
                    await pipe.execute()
            revived.append(message_id)
        return revived

    async def defer(self, message_id: str, error: str) -> int:
        """A round of sends failed for a reason that passes; the rounds failed so far (in the reply's state hash)."""
        key = self._scope.key("out", message_id)
        await self._scope.redis.hset(key, "error", error)
        return int(await self._scope.redis.hincrby(key, "rounds", 1))

    async def drop(self, ids: Sequence[str] = (), before: float | None = None) -> int:
        """Forget dead letters by id, or those that failed before `before`; how many."""
        if before is not None:
            ids = [message_id for message_id, record in (await self._records()).items() if record["when"] < before]
        if not ids:
            return 0
        return int(await self._scope.redis.hdel(self.hash, *ids))

"""The embedded bus: asyncio queues in front of a SQLite journal, so nothing accepted is lost in a crash."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from pathlib import Path

from bot.bus.contract import BusStats
from bot.bus.dead_letters import CRASH_APOLOGY, CRASH_REASON, DeadLetter, apology_for
from bot.bus.journal import Journal
from bot.bus.messages import InboundMessage, OutboundMessage
from bot.errors import BusClosed

logger = logging.getLogger(__name__)


class LocalBus:
    """One process's bus: the journal decides what is pending, the queues hand it out in order."""

    def __init__(self, journal_path: Path | None = None) -> None:
        self._journal = Journal(journal_path or ":memory:")
        self._inbound: asyncio.Queue[InboundMessage] = asyncio.Queue()
        self._outbound: asyncio.Queue[OutboundMessage] = asyncio.Queue()
        self._open = False
        self._intake_closed = False
        self._dead = LocalDeadLetters(self._journal, self._inbound, self._outbound)

    async def start(self) -> None:
        if self._open:
            return
        self._journal.open()
        self._open = True
        again, crashed = self._journal.pending_inbound()
        for reply in self._journal.pending_outbound():
            self._outbound.put_nowait(reply)
        for message in crashed:
            logger.error(
                "[%s] message %s crashed the process twice; marked failed", message.chat.session_key, message.id
            )
            apology = apology_for(message, CRASH_APOLOGY) if message.kind == "user" else None
            await self.fail_inbound([message], CRASH_REASON, apology)
        for message in again:
            self._inbound.put_nowait(message)
        if again or crashed:
            logger.warning("resuming %d pending messages (%d failed for good)", len(again), len(crashed))

    async def stop(self) -> None:
        self._journal.close()
        self._open = False

    def close_intake(self) -> None:
        self._intake_closed = True

    async def publish_inbound(self, message: InboundMessage) -> bool:
        if self._intake_closed:
            raise BusClosed("the bot is stopping; the message was not accepted")
        await self.start()
        if not self._journal.add_inbound(message):
            logger.info("[%s] message %s already accepted; ignored", message.chat.session_key, message.id)
            return False
        self._inbound.put_nowait(message)
        return True

    async def consume_inbound(self) -> InboundMessage:
        return await self._inbound.get()

    async def begin_inbound(self, message_ids: Sequence[str]) -> None:
        self._journal.begin_inbound(message_ids)

    async def complete_inbound(self, message_ids: Sequence[str]) -> None:
        self._journal.set_inbound(message_ids, "done")

    async def release_inbound(self, message_ids: Sequence[str]) -> None:
        self._journal.set_inbound(message_ids, "pending")

    async def fail_inbound(
        self, messages: Sequence[InboundMessage], reason: str, apology: OutboundMessage | None = None
    ) -> None:
        if self._journal.fail_inbound([m.id for m in messages], reason, apology) and apology is not None:
            self._outbound.put_nowait(apology)
        self._dead.failed(messages, reason)

    async def publish_outbound(self, message: OutboundMessage, completes: Sequence[str] = ()) -> bool:
        await self.start()
        if not self._journal.add_outbound(message, completes):
            return False
        self._outbound.put_nowait(message)
        return True

    async def consume_outbound(self) -> OutboundMessage:
        return await self._outbound.get()

    async def chunks_sent(self, message_id: str) -> int:
        return self._journal.chunks_sent(message_id)

    async def mark_chunk_sent(self, message_id: str, index: int) -> None:
        self._journal.mark_chunk_sent(message_id, index)

    async def mark_sent(self, message_id: str) -> None:
        self._journal.set_outbound(message_id, "sent")

    async def mark_failed(self, message_id: str, error: str) -> None:
        self._journal.set_outbound(message_id, "failed", error)

    async def count_ambiguous(self, message_id: str) -> None:
        self._journal.count_ambiguous(message_id)

    @property
    def dead_letters(self) -> LocalDeadLetters:
        return self._dead

    async def stats(self) -> BusStats:
        return self._journal.stats()


class LocalDeadLetters:
    """The journal's dead letters; a retry queues the messages on the bus's queues (queues nobody reads when the
    CLI opened the journal with no gateway running: the next start finds the messages pending)."""

    def __init__(
        self,
        journal: Journal,
        inbound: asyncio.Queue[InboundMessage],
        outbound: asyncio.Queue[OutboundMessage],
    ) -> None:
        self._journal = journal
        self._inbound = inbound
        self._outbound = outbound
        self._listeners: list[Callable[[InboundMessage, str], None]] = []

    def on_inbound_failed(self, listener: Callable[[InboundMessage, str], None]) -> None:
        self._listeners.append(listener)

    def failed(self, messages: Sequence[InboundMessage], reason: str) -> None:
        """Tell the listeners of these new inbound dead letters."""
        for message in messages:
            for listener in self._listeners:
                listener(message, reason)

    async def letters(self, chat: str | None = None) -> list[DeadLetter]:
        return self._journal.dead_letters(chat)

    async def retry(self, ids: Sequence[str]) -> list[str]:
        revived = self._journal.revive(ids)
        for message in revived.inbound:
            self._inbound.put_nowait(message)
        for reply in revived.outbound:
            self._outbound.put_nowait(reply)
        return revived.ids

    async def drop(self, ids: Sequence[str] = (), before: float | None = None) -> int:
        return self._journal.drop_dead(ids, before)

    async def defer(self, message_id: str, error: str) -> int:
        return self._journal.defer_outbound(message_id, error)

"""The bus contracts: the inbox (messages to the agent), the outbox (replies to channels), and both as MessageBus.

Inbound: `publish_inbound` returns only once the message is durable, so a channel acknowledges the
platform after it. `consume_inbound` leases the message to this process: it stays pending until
`complete_inbound` (its turn finished and the reply is in the outbox) or goes back with
`release_inbound`, or fails for good with `fail_inbound` (a dead letter, with one apology). `begin_inbound` counts a
turn start; a message whose turns started twice without finishing crashed the process twice and is failed on the
next start the same way.

Outbound: `publish_outbound` is durable before it returns (and may complete inbound messages in the
same write); chunks are marked sent one by one, so a restart resumes after the last confirmed chunk.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from bot.bus.dead_letters import DeadLetter
from bot.bus.messages import InboundMessage, OutboundMessage


@dataclass(frozen=True, slots=True)
class BusStats:
    """What `relaybot status` shows about delivery."""

    inbound_pending: int = 0
    inbound_failed: int = 0
    outbound_pending: int = 0
    outbound_failed: int = 0
    ambiguous_sends: int = 0
    oldest_dead: float | None = None  # when the oldest waiting dead letter failed (epoch seconds)

    @property
    def dead_letters(self) -> int:
        """Failed messages and replies waiting for an operator's retry or drop."""
        return self.inbound_failed + self.outbound_failed


class DeadLetters(Protocol):
    """Messages that failed for good, kept for the operator: listed, put back (queued at once) or dropped; and
    the rounds of a reply whose failure passes, before it becomes one."""

    async def letters(self, chat: str | None = None) -> list[DeadLetter]:
        """Every dead letter, oldest first, optionally of one chat (its session key)."""

    async def retry(self, ids: Sequence[str]) -> list[str]:
        """Run these inbound messages again and send these replies again; the ids that were dead letters."""

    async def drop(self, ids: Sequence[str] = (), before: float | None = None) -> int:
        """Forget dead letters by id, or those that failed before `before`; how many."""

    async def defer(self, message_id: str, error: str) -> int:
        """A round of sends of a reply failed for a reason that passes; it stays pending. The rounds failed so far."""

    def on_inbound_failed(self, listener: Callable[[InboundMessage, str], None]) -> None:
        """Call `listener` with each inbound message this process makes a dead letter, and why."""


class Inbox(Protocol):
    """Carries inbound messages to the agent: producers publish, the agent consumes and settles them."""

    def close_intake(self) -> None:
        """Refuse new inbound messages from now on (a stop is under way); publishing raises BusClosed."""

    async def publish_inbound(self, message: InboundMessage) -> bool:
        """Accept a message durably; False when the same message was accepted before (a redelivery)."""

    async def consume_inbound(self) -> InboundMessage:
        """The next message to handle, leased to this process until completed or released."""

    async def begin_inbound(self, message_ids: Sequence[str]) -> None:
        """A turn carrying these messages starts now (it counts toward the crash limit)."""

    async def complete_inbound(self, message_ids: Sequence[str]) -> None:
        """These messages are handled: their turn finished and any reply is in the outbox."""

    async def release_inbound(self, message_ids: Sequence[str]) -> None:
        """Give messages back unfinished (a graceful stop); the next start runs them again."""

    async def fail_inbound(
        self, messages: Sequence[InboundMessage], reason: str, apology: OutboundMessage | None = None
    ) -> None:
        """These messages failed for good: they wait as dead letters with `reason`, and `apology` is journaled for
        delivery in the same write, once by its id (a retried message that fails again is not apologised for twice)."""


class Outbox(Protocol):
    """Carries outbound messages to the channels: the agent publishes, the channels deliver and mark them."""

    async def publish_outbound(self, message: OutboundMessage, completes: Sequence[str] = ()) -> bool:
        """Journal a message for delivery and mark `completes` handled, in one durable write; False for a known id."""

    async def consume_outbound(self) -> OutboundMessage:
        """The next message to deliver."""

    async def chunks_sent(self, message_id: str) -> int:
        """How many leading chunks of a message the platform already confirmed."""

    async def mark_chunk_sent(self, message_id: str, index: int) -> None:
        """The platform confirmed chunk `index` of a message."""

    async def mark_sent(self, message_id: str) -> None:
        """The whole message is delivered."""

    async def mark_failed(self, message_id: str, error: str) -> None:
        """The message cannot be delivered: it becomes a dead letter, with `error` as the reason."""

    async def count_ambiguous(self, message_id: str) -> None:
        """A send of this message may or may not have reached the platform (it is retried once)."""

    @property
    def dead_letters(self) -> DeadLetters:
        """The failed messages, and the later rounds of replies whose failure passes."""


class MessageBus(Inbox, Outbox, Protocol):
    """Both directions with one journal and one lifecycle, for the parts that need both (the agent, the gateway)."""

    async def start(self) -> None:
        """Open the journal and queue what an earlier run left pending, in its original order."""

    async def stop(self) -> None:
        """Close the journal; anything unfinished stays pending for the next start."""

    async def stats(self) -> BusStats:
        """Counts for `relaybot status`."""

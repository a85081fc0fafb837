"""Delivering one channel's outbox: in order within a chat, up to `send_concurrency` chats at once."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence

from bot.bus import OutboundMessage
from bot.bus.contract import Outbox
from bot.bus.dead_letters import LATER_RETRIES, format_age
from bot.cancelling import cancel_and_wait
from bot.errors import ChannelError, ChannelUnavailable, DeliveryAmbiguous, RateLimited
from bot.events import Delivered, DeliveryFailed, EventBus
from bot.retry import RetryPolicy
from channels.base import Channel
from channels.delivery import ChunkProgress, chunk_progress
from channels.gateway.send_slots import SendSlots

logger = logging.getLogger(__name__)

SEND_RETRY = RetryPolicy(attempts=7, base_delay=0.25)
"""A 5xx or a reset is retried at once (the chat's later replies wait behind it), then after 0.25-0.5 s, backing
off to 8 s; the seven attempts span about 15 s of outage, as five from 1 s did."""


class ChannelOutbox:
    """One worker per chat with queued messages; a shared pool bounds sends in flight; waits hold no slot."""

    def __init__(
        self,
        channel: Channel,
        bus: Outbox,
        events: EventBus,
        ready: asyncio.Event,
        concurrency: int = 8,
        retry: RetryPolicy | None = None,
        finish_live: Callable[[OutboundMessage], Awaitable[bool]] | None = None,
        clock: Callable[[], float] = time.monotonic,
        later: Sequence[float] = LATER_RETRIES,
        mask: Callable[[str], str] = str,
    ) -> None:
        """`later`: the waits before each further round of sends for a failure that passes (waited with the
        retry policy's sleep); when they are spent, the message becomes a dead letter. `mask` hides the config's
        secrets in the reasons kept."""
        self._channel = channel
        self._bus = bus
        self._events = events
        self._ready = ready
        self._pool = SendSlots(concurrency)
        self._retry = retry or SEND_RETRY
        self._finish_live = finish_live
        self._clock = clock
        self._chats: dict[str, deque[tuple[OutboundMessage, float]]] = {}  # each message with when it was queued
        self._workers: dict[str, asyncio.Task[None]] = {}
        self._later = tuple(later)
        self._mask = mask
        self._waiting: set[asyncio.Task[None]] = set()  # messages waiting for a later round
        self._paused_until = 0.0
        self._idle = asyncio.Event()
        self._idle.set()
        self.delivered = 0

    @property
    def sends_waiting(self) -> int:
        """How many sends wait for a free send slot."""
        return self._pool.waiting

    def submit(self, message: OutboundMessage) -> None:
        """Queue a journaled message behind the earlier ones of its chat."""
        key = message.chat.session_key
        self._chats.setdefault(key, deque()).append((message, self._clock()))
        self._idle.clear()
        if key not in self._workers:
            self._workers[key] = asyncio.create_task(self._drain(key), name=f"send:{key}")

    async def flush(self, timeout: float) -> bool:
        """Wait up to `timeout` for every queued message to be sent or given up; True when all were."""
        try:
            await asyncio.wait_for(self._idle.wait(), timeout)
        except TimeoutError:
            return False
        return True

    async def stop(self) -> None:
        """Cancel the workers and the later rounds; unsent messages stay pending in the journal."""
        workers = [*self._workers.values(), *self._waiting]
        await cancel_and_wait(*workers)
        self._waiting.clear()
        self._workers.clear()
        self._chats.clear()

    async def _drain(self, key: str) -> None:
        queue = self._chats[key]
        try:
            await self._ready.wait()
            while queue:
                await self._deliver(*queue[0])
                queue.popleft()
        finally:
            self._chats.pop(key, None)
            self._workers.pop(key, None)
            if not self._workers:
                self._idle.set()

    async def _deliver(self, message: OutboundMessage, queued_at: float) -> None:
        """Send with retries: a 429 pauses this chat (or every chat when global) and spends no attempt;
        5xx and resets spend one each (the first retried at once); an ambiguous drop retries once; spent
        attempts wait for a later round. Each attempt waits for a send slot by `queued_at`: oldest first."""
        key = message.chat.session_key
        ambiguous = 0
        failures = 0
        reason = ""
        await self._wait_for_global_pause()
        while True:
            try:
                await self._send_once(message, queued_at)
                self.delivered += 1
                self._events.emit(Delivered(message.chat, message.id, message.in_reply_to, message.kind))
                return
            except DeliveryAmbiguous as exc:
                await self._bus.count_ambiguous(message.id)
                ambiguous += 1
                if ambiguous > 1:
                    return await self._give_up(message, f"connection dropped twice after sending ({exc})")
                failures += 1
                wait = self._backoff(failures)
            except RateLimited as exc:
                wait = exc.retry_after
                if exc.whole_bot:
                    self._paused_until = max(self._paused_until, self._clock() + wait)
            except ChannelUnavailable as exc:
                failures += 1
                reason = str(exc) or type(exc).__name__
                wait = self._backoff(failures)
            except ChannelError as exc:  # the chat is gone, the bot blocked or refused: it cannot pass
                return await self._give_up(message, str(exc) or type(exc).__name__)
            except Exception as exc:
                logger.exception("[%s] delivery of %s crashed", key, message.id)
                return await self._give_up(message, type(exc).__name__)
            if failures >= self._retry.attempts:
                return await self._try_later(message, f"still failing after {failures} attempts ({reason})")
            wait = max(wait, self._paused_until - self._clock())
            logger.info("[%s] send %s failed; retry in %.1fs", key, message.id, wait)
            if wait > 0:
                await self._retry.sleep(wait)

    def _backoff(self, failures: int) -> float:
        """The wait after a transient failure: none after the first (most pass at once), then the policy's."""
        return self._retry.delay(failures) if failures > 1 else 0.0

    async def _send_once(self, message: OutboundMessage, queued_at: float) -> None:
        """Finish the turn's live reply with it, or send it (holding a pool slot) after the chunks already confirmed."""
        # Finishing a live reply first waits for its update in flight: a slot held through that wait stalls other chats.
        if self._finish_live is not None and await self._finish_live(message):
            await self._bus.mark_sent(message.id)
            return
        async with self._pool.slot(queued_at):
            await self._send_after_confirmed(message)

    async def _send_after_confirmed(self, message: OutboundMessage) -> None:
        confirmed = await self._bus.chunks_sent(message.id)

        async def confirm(index: int) -> None:
            await self._bus.mark_chunk_sent(message.id, index)

        token = chunk_progress.set(ChunkProgress(confirmed, confirm))
        try:
            await self._channel.send(message)
        finally:
            chunk_progress.reset(token)
        await self._bus.mark_sent(message.id)

    async def _wait_for_global_pause(self) -> None:
        wait = self._paused_until - self._clock()
        if wait > 0:
            await self._retry.sleep(wait)

    async def _try_later(self, message: OutboundMessage, error: str) -> None:
        """A failure that passes outlasted this round: send again after the next of `later`, or give up."""
        error = self._mask(error)
        rounds = await self._bus.dead_letters.defer(message.id, error)
        if rounds > len(self._later):
            return await self._give_up(message, f"{error}; {rounds} rounds over {format_age(sum(self._later))}")
        wait = self._later[rounds - 1]
        logger.warning(
            "[%s] send %s failed: %s; trying again in %s", message.chat.session_key, message.id, error, format_age(wait)
        )
        task = asyncio.create_task(self._send_later(message, wait), name=f"send-later:{message.id}")
        self._waiting.add(task)
        task.add_done_callback(self._waiting.discard)

    async def _send_later(self, message: OutboundMessage, wait: float) -> None:
        await self._retry.sleep(wait)
        self.submit(message)

    async def _give_up(self, message: OutboundMessage, error: str) -> None:
        error = self._mask(error)
        logger.error("[%s] could not deliver %s: %s", message.chat.session_key, message.id, error)
        await self._bus.mark_failed(message.id, error)
        self._events.emit(DeliveryFailed(message.chat, message.id, message.in_reply_to, error))

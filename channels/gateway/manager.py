"""Starts channels, gates what they publish, and hands outbound messages to each channel's outbox."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from bot.access.flood import RateLimit, Verdict, flood_notice
from bot.access.pairing import pairing_message
from bot.access.policy import AccessPolicy, Ignore, Overheard, Reply, SendPairingCode, Serve
from bot.bus import ChatRef, InboundMessage, MessageBus, OutboundMessage
from bot.cancelling import cancel_and_wait
from bot.events import (
    Delivered,
    DeliveryFailed,
    Event,
    EventBus,
    ReasoningDelta,
    StreamDelta,
    StreamStarted,
    ToolCalled,
    TurnFinished,
    TurnStarted,
)
from bot.retry import RetryPolicy
from channels.base import Channel, CommandSpec, Dismisses, Publish, ShowsTyping
from channels.dedupe import RECENT_DELIVERIES, SeenIds
from channels.gateway.group_context import GroupContext
from channels.gateway.health import ChannelHealth, MessageCounts
from channels.gateway.menus import offer_commands
from channels.gateway.outbound import ChannelOutbox
from channels.gateway.reactions import ReactionMode, Reactions
from channels.gateway.typing_indicators import TypingIndicators
from channels.gateway.watchdog import Watchdog
from channels.liveness import Liveness, ReportsLiveness
from channels.streaming import LiveReply, StreamsReplies

logger = logging.getLogger(__name__)

START_RETRY_CAP = 300.0


@dataclass
class _Slot:
    """One channel with its outbox and lifecycle state."""

    channel: Channel
    outbox: ChannelOutbox
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    tried: asyncio.Event = field(default_factory=asyncio.Event)


class ChannelManager:
    """Owns the channels' lifecycles; one failing or slow channel never holds up another."""

    def __init__(
        self,
        bus: MessageBus,
        events: EventBus | None = None,
        access: dict[str, AccessPolicy] | None = None,
        start_retry: RetryPolicy | None = None,
        rate_limit: RateLimit | None = None,
        send_retry: RetryPolicy | None = None,
        clock: Callable[[], float] = time.time,
        reactions: Mapping[str, ReactionMode | None] | None = None,
        commands: Sequence[CommandSpec] = (),
    ) -> None:
        """`reactions` is each channel's `reactions` setting; `commands` the native command menu."""
        self._bus = bus
        self._send_retry = send_retry
        self._events = events or EventBus()
        self._access = access or {}
        self._rate_limit = rate_limit
        self._start_retry = start_retry or RetryPolicy(base_delay=2.0, max_delay=START_RETRY_CAP)
        self._clock = clock
        self._health: dict[str, ChannelHealth] = {}
        self._inbound: Counter[str] = Counter()
        self._slots: dict[str, _Slot] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._typing = TypingIndicators()
        self._background: set[asyncio.Task[None]] = set()
        self._live: dict[str, LiveReply] = {}
        self._seen_inbound = SeenIds(RECENT_DELIVERIES)
        self._group_context = GroupContext()
        self._unsubscribe = lambda: None
        self._reactions = Reactions(reactions or {}, self._spawn)
        self._commands = commands
        self._handlers = self._event_handlers()

    def publisher(self, name: str) -> Publish:
        """The `publish` callable for channel `name`: dedupe, then access, then the bus."""

        async def publish(message: InboundMessage) -> None:
            await self._admit(name, message)

        return publish

    def add(self, channel: Channel, send_concurrency: int = 8) -> None:
        """Register a channel before `start`; up to `send_concurrency` of its chats receive at once."""
        ready = asyncio.Event()
        outbox = ChannelOutbox(
            channel, self._bus, self._events, ready, send_concurrency, self._send_retry, self._finish_live
        )
        self._slots[channel.name] = _Slot(channel, outbox, ready)

    async def start(self) -> None:
        """Start every channel in the background (retrying failures) and begin routing."""
        self._unsubscribe = self._events.subscribe(self._on_event, *self._handlers)
        for name, slot in self._slots.items():
            self._tasks.append(asyncio.create_task(self._keep_starting(slot), name=f"start:{name}"))
        self._tasks.append(asyncio.create_task(self._route(), name="outbound-router"))
        watchdog = Watchdog(self.liveness, self.restart)
        self._tasks.append(asyncio.create_task(watchdog.run(), name="channel-watchdog"))

    async def flush(self, timeout: float) -> bool:
        """Wait up to `timeout` for every channel's outbox to empty; True when it did."""
        results = await asyncio.gather(*(slot.outbox.flush(timeout) for slot in self._slots.values()))
        return all(results)

    async def stop(self) -> None:
        """Stop routing, typing and sending (unsent messages stay journaled), then stop the channels in reverse."""
        self._unsubscribe()
        await self._typing.stop_all()
        tasks = [*self._tasks, *self._background]
        lives, self._live = list(self._live.values()), {}
        await asyncio.gather(*(live.close() for live in lives))
        await cancel_and_wait(*tasks)
        self._tasks.clear()
        for slot in self._slots.values():
            await slot.outbox.stop()
        for slot in reversed(list(self._slots.values())):
            if slot.ready.is_set():
                try:
                    await slot.channel.stop()
                except Exception:
                    logger.exception("%s: failed to stop cleanly", slot.channel.name)
                slot.ready.clear()

    def set_access(self, access: dict[str, AccessPolicy]) -> None:
        """Decide by these access policies from the next message on (a config reload)."""
        self._access = access

    def health(self) -> dict[str, ChannelHealth]:
        """Each channel's connection state, last start error and since when."""
        return dict(self._health)

    def counts(self) -> dict[str, MessageCounts]:
        """Each channel's messages published to the agent and delivered out, since start."""
        return {name: MessageCounts(self._inbound[name], slot.outbox.delivered) for name, slot in self._slots.items()}

    def liveness(self) -> dict[str, Liveness]:
        """The connected channels that report their last successful poll or event, with it."""
        return {
            name: slot.channel.liveness
            for name, slot in self._slots.items()
            if slot.ready.is_set() and isinstance(slot.channel, ReportsLiveness)
        }

    async def restart(self, name: str) -> None:
        """Stop channel `name` and start it again in the background (retrying with backoff as at start)."""
        slot = self._slots[name]
        slot.ready.clear()
        self._health[name] = ChannelHealth("starting", self._clock(), "restarted: no successful poll")
        try:
            await slot.channel.stop()
        except Exception:
            logger.exception("%s: failed to stop cleanly before a restart", name)
        self._spawn(self._keep_starting(slot), f"restart:{name}")

    def connected(self) -> dict[str, bool]:
        """Each channel's name and whether it has started."""
        return {name: slot.ready.is_set() for name, slot in self._slots.items()}

    async def ready(self, name: str) -> None:
        """Wait until channel `name` has started."""
        await self._slots[name].ready.wait()

    async def tried(self) -> None:
        """Wait until every channel has tried to start once, connected or failed."""
        for slot in self._slots.values():
            await slot.tried.wait()

    async def _admit(self, name: str, message: InboundMessage) -> None:
        key = message.chat.session_key
        if message.platform_message_id and not self._seen_inbound.add(f"{key}/{message.platform_message_id}"):
            logger.info("[%s] duplicate delivery of %s ignored", key, message.platform_message_id)
            return
        policy = self._access.get(name)
        match policy.decide(message) if policy else Serve(message):
            case Serve(message=served):
                if not self._within_rate(name, served):
                    self._dismiss(name, message)
                    return
                await self._bus.publish_inbound(self._group_context.served(served))
                self._inbound[name] += 1
                if (slot := self._slots.get(name)) is not None:
                    self._reactions.accepted(slot.channel, served)
            case SendPairingCode(code=code, repeated=repeated):
                level = logging.INFO if repeated else logging.WARNING
                what = "sent again" if repeated else "issued"
                logger.log(level, "[%s] pairing code %s to %s (%s)", key, what, message.sender_id, message.sender_name)
                answer = OutboundMessage(
                    message.chat, pairing_message(name, code), reply_to_platform_id=message.platform_message_id
                )
                await self._bus.publish_outbound(answer)
            case Overheard(line=line, limit=limit, chars=chars):
                self._group_context.keep(message, line, limit, chars)
            case Reply(text=text):
                reply = OutboundMessage(message.chat, text, reply_to_platform_id=message.platform_message_id)
                await self._bus.publish_outbound(reply)
            case Ignore(reason=reason):
                logger.debug("[%s] ignored message from %s: %s", key, message.sender_id, reason)
                self._dismiss(name, message)

    def _dismiss(self, name: str, message: InboundMessage) -> None:
        """Tell the channel a message gets no answer, where it shows one coming (in the background)."""
        slot = self._slots.get(name)
        if slot is not None and isinstance(slot.channel, Dismisses) and message.platform_message_id:
            dismissed = slot.channel.dismiss(message.chat, message.platform_message_id)
            self._spawn(dismissed, f"dismiss:{message.chat.session_key}")

    def _within_rate(self, name: str, message: InboundMessage) -> bool:
        """Whether the sender is within `access.rate_limit`; past it the message is dropped before the model."""
        if self._rate_limit is None:
            return True
        verdict = self._rate_limit.check(message)
        if verdict is Verdict.PASS:
            return True
        if verdict is Verdict.DROP_AND_NOTIFY:
            logger.warning("[%s] %s is over the rate limit; dropping", message.chat.session_key, message.sender_id)
            notice = flood_notice(self._rate_limit.per_minute)
            # Not journaled: a flood notice lost in a crash needs no resend.
            self._slots[name].outbox.submit(OutboundMessage(message.chat, notice, kind="notice"))
        return False

    async def _keep_starting(self, slot: _Slot) -> None:
        """Start the channel, retrying with capped backoff; the first failure is one ERROR line, repeats INFO."""
        name = slot.channel.name
        self._health[name] = ChannelHealth("starting", self._clock())
        failures = 0
        while True:
            try:
                await slot.channel.start()
            except Exception as exc:
                slot.tried.set()
                failures += 1
                error = f"{type(exc).__name__}: {exc}"
                delay = self._start_retry.delay(min(failures, 12))
                previous = self._health[name]
                since = previous.since if previous.state == "failed" else self._clock()
                self._health[name] = ChannelHealth("failed", since, error, failures)
                if failures == 1:
                    logger.error("%s: failed to start (%s); retrying with backoff up to 5 minutes", name, error)
                else:
                    logger.info("%s: still failing (%s); retry %d in %.0fs", name, error, failures, delay)
                await self._start_retry.sleep(delay)
                continue
            self._health[name] = ChannelHealth("connected", self._clock(), self._health[name].last_error, failures)
            logger.info("%s: connected", name)
            slot.ready.set()
            slot.tried.set()
            self._spawn(offer_commands(slot.channel, self._commands), f"commands:{name}")
            return

    async def _route(self) -> None:
        while True:
            message = await self._bus.consume_outbound()
            slot = self._slots.get(message.chat.channel)
            if slot is None:
                error = f"no channel {message.chat.channel!r} is running"
                logger.warning("[%s] %s; message dropped", message.chat.session_key, error)
                await self._bus.mark_failed(message.id, error)
                self._events.emit(DeliveryFailed(message.chat.session_key, message.id, message.in_reply_to, error))
                continue
            self._stop_typing(message.chat)
            slot.outbox.submit(message)

    async def _finish_live(self, message: OutboundMessage) -> bool:
        """Complete the turn's live reply with the final text, if it has one; False: send it as a message."""
        live = self._live.pop(message.finalises, None) if message.finalises else None
        return live is not None and await live.finish(message)

    def _event_handlers(self) -> dict[type, Callable[[Any], None]]:
        """What each kind of event the manager follows does: typing, reactions and live replies."""
        return {
            TurnStarted: self._on_turn_started,
            TurnFinished: self._on_turn_finished,
            Delivered: self._on_delivery,
            DeliveryFailed: self._on_delivery,
            StreamStarted: self._on_stream_started,
            StreamDelta: self._on_stream_delta,
            ReasoningDelta: self._on_reasoning_delta,
            ToolCalled: self._on_tool_called,
        }

    def _on_event(self, event: Event) -> None:
        self._handlers[type(event)](event)

    def _on_turn_started(self, event: TurnStarted) -> None:
        self._reactions.turn_started(event)
        slot = self._slots.get(event.chat.channel)
        if slot and isinstance(slot.channel, ShowsTyping):
            self._typing.start(event.session_key, partial(self._show_typing, slot, event.chat))

    def _on_turn_finished(self, event: TurnFinished) -> None:
        self._stop_typing(event.chat)
        finished = self._slots.get(event.chat.channel)
        self._reactions.turn_finished(finished.channel if finished else None, event)
        live = self._live.pop(event.turn_id, None) if not event.replied else None
        if live is not None:
            self._spawn(live.abandon(event.outcome), f"live-abandon:{event.session_key}")

    def _on_delivery(self, event: Delivered | DeliveryFailed) -> None:
        self._reactions.delivery(event)

    def _on_stream_started(self, event: StreamStarted) -> None:
        """Create the turn's live reply at its first model call; tell it each later call started."""
        live = self._live.get(event.turn_id)
        slot = self._slots.get(event.chat.channel)
        if live is None and slot and slot.ready.is_set() and isinstance(slot.channel, StreamsReplies):
            live = slot.channel.live_reply(event.chat, event.reply_to, event.recipient)
            if live is not None:
                self._live[event.turn_id] = live
        if live is not None:
            live.call_started()

    def _on_stream_delta(self, event: StreamDelta) -> None:
        if live := self._live.get(event.turn_id):
            live.add(event.text)

    def _on_reasoning_delta(self, event: ReasoningDelta) -> None:
        if live := self._live.get(event.turn_id):
            live.add_reasoning(event.text)

    def _on_tool_called(self, event: ToolCalled) -> None:
        if live := self._live.get(event.turn_id):
            live.tool_started(event.tool)

    def _spawn(self, work: Any, name: str) -> None:
        task = asyncio.create_task(work, name=name)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _stop_typing(self, chat: ChatRef) -> None:
        self._typing.stop(chat.session_key)

    @staticmethod
    async def _show_typing(slot: _Slot, chat: ChatRef) -> None:
        """Typing in `chat`, once its channel is connected."""
        if slot.ready.is_set():
            assert isinstance(slot.channel, ShowsTyping)
            await slot.channel.show_typing(chat)

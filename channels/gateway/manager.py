"""The gateway's face to the composition root: supervision, intake and presence wired together, and outbound routing."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence

from bot.access.flood import RateLimit
from bot.access.policy import AccessPolicy
from bot.bus import MessageBus
from bot.commands.catalogue import CommandSpec
from bot.events import DeliveryFailed, EventBus
from bot.retry import RetryPolicy
from channels.base import Channel, Publish
from channels.dedupe import RECENT_DELIVERIES
from channels.gateway.health import ChannelHealth, MessageCounts
from channels.gateway.intake import Intake
from channels.gateway.outbound import ChannelOutbox
from channels.gateway.presence import Presence
from channels.gateway.reactions import ReactionMode
from channels.gateway.supervisor import Slot, Supervisor
from channels.gateway.tasks import OwnedTasks
from channels.gateway.watchdog import Watchdog
from channels.liveness import Liveness

logger = logging.getLogger(__name__)


class ChannelManager:
    """Runs every channel: supervises them, admits what they publish, shows turns on them, routes replies to them."""

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
        remembered: int = RECENT_DELIVERIES,
        menu_users: Mapping[str, Sequence[str]] | None = None,
        mask: Callable[[str], str] = str,
    ) -> None:
        """`reactions` is each channel's `reactions` setting; `commands` the native command menu, its privileged
        commands shown to each channel's `menu_users`; `remembered` bounds the inbound ids kept to drop redeliveries;
        `mask` hides the config's secrets in the error texts kept for status, the dashboard and dead letters."""
        self._bus = bus
        self._events = events or EventBus()
        self._send_retry = send_retry
        self._mask = mask
        self._tasks = OwnedTasks()
        self._supervisor = Supervisor(self._tasks.spawn, start_retry, clock, commands, menu_users, mask)
        self._presence = Presence(self._supervisor.slots, reactions or {}, self._tasks.spawn)
        self._intake = Intake(
            bus, self._supervisor.slots, self._tasks.spawn, self._presence.accepted, rate_limit, remembered
        )
        self._intake.access = access or {}
        self._unsubscribe = lambda: None

    def publisher(self, name: str) -> Publish:
        """The `publish` callable for channel `name`: dedupe, then access, then the bus."""
        return self._intake.publisher(name)

    def add(self, channel: Channel, send_concurrency: int = 8) -> None:
        """Register a channel before `start`; up to `send_concurrency` of its chats receive at once."""
        ready = asyncio.Event()
        outbox = ChannelOutbox(
            channel,
            self._bus,
            self._events,
            ready,
            send_concurrency,
            self._send_retry,
            self._presence.finish_live,
            mask=self._mask,
        )
        self._slots[channel.key] = Slot(channel, outbox, ready)

    async def start(self) -> None:
        """Start every channel in the background (retrying failures) and begin routing."""
        self._unsubscribe = self._events.subscribe(self._presence.on_event, *self._presence.followed)
        self._supervisor.start()
        self._tasks.spawn(self._route(), "outbound-router")
        self._tasks.spawn(Watchdog(self.liveness, self.restart).run(), "channel-watchdog")

    async def flush(self, timeout: float) -> bool:
        """Wait up to `timeout` for every channel's outbox to empty; True when it did."""
        results = await asyncio.gather(*(slot.outbox.flush(timeout) for slot in self._slots.values()))
        return all(results)

    async def stop(self) -> None:
        """Stop routing, typing and sending (unsent messages stay journaled), then stop the channels in reverse."""
        self._unsubscribe()
        await self._presence.stop()
        await self._tasks.stop()
        await self._supervisor.stop()

    def set_access(self, access: dict[str, AccessPolicy]) -> None:
        """Decide by these access policies from the next message on (a config reload)."""
        self._intake.access = access

    def access_of(self, name: str) -> AccessPolicy | None:
        """The access policy channel `name` is decided by now (after any reload)."""
        return self._intake.access.get(name)

    def health(self) -> dict[str, ChannelHealth]:
        """Each channel's connection state, last start error and since when."""
        return self._supervisor.health()

    def counts(self) -> dict[str, MessageCounts]:
        """Each channel's messages published to the agent and delivered out, since start."""
        published = self._intake.published
        return {name: MessageCounts(published[name], slot.outbox.delivered) for name, slot in self._slots.items()}

    def liveness(self) -> dict[str, Liveness]:
        """The connected channels that report their last successful poll or event, with it."""
        return self._supervisor.liveness()

    async def restart(self, name: str) -> None:
        """Stop channel `name` and start it again in the background (retrying with backoff as at start)."""
        await self._supervisor.restart(name)

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

    @property
    def _slots(self) -> dict[str, Slot]:
        return self._supervisor.slots

    async def _route(self) -> None:
        while True:
            message = await self._bus.consume_outbound()
            slot = self._slots.get(message.chat.channel_key)
            if slot is None:
                error = f"no channel {message.chat.channel_key!r} is running"
                logger.warning("[%s] %s; message dropped", message.chat.session_key, error)
                await self._bus.mark_failed(message.id, error)
                self._events.emit(DeliveryFailed(message.chat, message.id, message.in_reply_to, error))
                continue
            self._presence.replying(message.chat)
            slot.outbox.submit(message)

"""Supervision: each channel started in the background with capped backoff, restarted when asked, stopped in reverse."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.commands.catalogue import CommandSpec
from bot.retry import RetryPolicy
from channels.abilities import ReportsLiveness
from channels.base import Channel
from channels.gateway.health import ChannelHealth
from channels.gateway.menus import offer_commands
from channels.gateway.outbound import ChannelOutbox
from channels.liveness import Liveness

logger = logging.getLogger(__name__)

START_RETRY_CAP = 300.0

Spawn = Callable[[Coroutine[Any, Any, None], str], None]


@dataclass
class Slot:
    """One channel with its outbox and lifecycle state."""

    channel: Channel
    outbox: ChannelOutbox
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    tried: asyncio.Event = field(default_factory=asyncio.Event)


class Supervisor:
    """Owns the channels' lifecycles; one failing or slow channel never holds up another."""

    def __init__(
        self,
        spawn: Spawn,
        start_retry: RetryPolicy | None = None,
        clock: Callable[[], float] = time.time,
        commands: Sequence[CommandSpec] = (),
        menu_users: Mapping[str, Sequence[str]] | None = None,
        mask: Callable[[str], str] = str,
    ) -> None:
        """`spawn` runs background work; `commands` is the native command menu offered once a channel starts,
        its privileged commands to each channel's `menu_users` (owners' and admins' user ids)."""
        self.slots: dict[str, Slot] = {}
        self._spawn = spawn
        self._start_retry = start_retry or RetryPolicy(base_delay=2.0, max_delay=START_RETRY_CAP)
        self._clock = clock
        self._commands = commands
        self._menu_users = menu_users or {}
        self._health: dict[str, ChannelHealth] = {}
        self._mask = mask  # the config's secrets out of the errors kept for status and the dashboard

    def start(self) -> None:
        """Start every channel in the background, retrying failures."""
        for name, slot in self.slots.items():
            self._spawn(self._keep_starting(slot), f"start:{name}")

    async def stop(self) -> None:
        """Stop each channel's outbox (unsent messages stay journaled), then the channels in reverse order."""
        for slot in self.slots.values():
            await slot.outbox.stop()
        for slot in reversed(list(self.slots.values())):
            if slot.ready.is_set():
                try:
                    await slot.channel.stop()
                except Exception:
                    logger.exception("%s: failed to stop cleanly", slot.channel.key)
                slot.ready.clear()

    async def restart(self, name: str) -> None:
        """Stop channel `name` and start it again in the background (retrying with backoff as at start)."""
        slot = self.slots[name]
        slot.ready.clear()
        self._health[name] = ChannelHealth("starting", self._clock(), "restarted: no successful poll")
        try:
            await slot.channel.stop()
        except Exception:
            logger.exception("%s: failed to stop cleanly before a restart", name)
        self._spawn(self._keep_starting(slot), f"restart:{name}")

    def health(self) -> dict[str, ChannelHealth]:
        """Each channel's connection state, last start error and since when."""
        return dict(self._health)

    def liveness(self) -> dict[str, Liveness]:
        """The connected channels that report their last successful poll or event, with it."""
        return {
            name: slot.channel.liveness
            for name, slot in self.slots.items()
            if slot.ready.is_set() and isinstance(slot.channel, ReportsLiveness)
        }

    async def _keep_starting(self, slot: Slot) -> None:
        """Start the channel, retrying with capped backoff; the first failure is one ERROR line, repeats INFO."""
        name = slot.channel.key
        self._health[name] = ChannelHealth("starting", self._clock())
        failures = 0
        while True:
            try:
                await slot.channel.start()
            except Exception as exc:
                slot.tried.set()
                failures += 1
                error = self._mask(f"{type(exc).__name__}: {exc}")
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
            menu = offer_commands(slot.channel, self._commands, self._menu_users.get(name, ()))
            self._spawn(menu, f"commands:{name}")
            return

"""The leases a process of a Redis cluster holds: one per channel credential it receives on, and the scheduler's."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, SecretStr

from bot.cluster.holders import HolderWatch
from bot.cluster.leases import Lease, credential_key

if TYPE_CHECKING:
    from bot.bus.redis.bus import RedisBus
    from bot.config.schema import Config

logger = logging.getLogger(__name__)

Role = Literal["gateway", "worker", "all"]
ROLES: tuple[Role, ...] = ("gateway", "worker", "all")


def channel_secrets(section: BaseModel) -> list[str]:
    """The credential of a channel section: its secret fields, in field order."""
    return [
        value.get_secret_value()
        for name in type(section).model_fields
        if isinstance(value := getattr(section, name), SecretStr)
    ]


class ClusterLeases:
    """Takes and keeps this process's leases on the redis bus; released on stop.

    Its leases share one watch of the holders' connections, begun with the first wait: a standby that takes the
    channels when the holder dies takes its scheduler lease at once too, not when that lease lapses.
    """

    def __init__(self, bus: RedisBus, config: Config) -> None:
        self._bus = bus
        self._config = config
        self._leases: list[Lease] = []
        self._watch = HolderWatch()

    def _lease(self, *parts: str) -> Lease:
        ttl = self._config.bus.lease
        lease = Lease(self._bus.redis, self._bus.key("lease", *parts), self._bus.consumer, ttl, self._watch)
        self._leases.append(lease)
        return lease

    async def hold_channels(
        self, names: list[str], on_lost: Callable[[], Awaitable[None]], relayed: Sequence[str] = ()
    ) -> None:
        """Wait until this gateway holds the lease of every channel credential it serves (a standby waits here).

        Then it reads the outboxes of those channels, and of the `relayed` ones that have no credential of their
        own (the triggers' sessions): another gateway's channels' replies never come here.
        """
        bots = self._config.channels.bot_sections()
        for name in names:
            secrets = channel_secrets(bots.get(name) or getattr(self._config.channels, name))
            lease = self._lease("channel", name, credential_key(secrets))
            logger.warning("waiting for the %s receiver lease", name)
            await lease.hold(on_lost)
        self._bus.deliver_for([*names, *relayed])  # replies for these channels come to this gateway, and only these

    async def hold_scheduler(self, on_lost: Callable[[], Awaitable[None]]) -> None:
        """Wait until this process leads the scheduler (cron and heartbeat)."""
        await self._lease("scheduler").hold(on_lost)

    async def release(self) -> None:
        for lease in reversed(self._leases):
            await lease.release()
        self._leases.clear()

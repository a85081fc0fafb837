"""The backend switch: which `Stores` a config gets, local files or Redis (and where triggers keep deliveries)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.app.stores import Stores
from bot.config.schema import Config

if TYPE_CHECKING:
    from bot.triggers.deliveries import Deliveries


def stores_for(config: Config) -> Stores:
    """The stores `bus.backend` names; this module is the only one that reads it."""
    if config.bus.backend == "redis":
        from bot.app.redis_stores import RedisStores

        return RedisStores(config)
    from bot.app.local_stores import LocalStores

    return LocalStores(config)


def deliveries_for(config: Config) -> Deliveries:
    """Where triggers remember their deliveries: Redis shared by a cluster's gateways, or a file in this home."""
    if config.bus.backend == "redis":
        from bot.cluster.redis import RedisState
        from bot.triggers.redis_deliveries import RedisDeliveryBook

        assert config.bus.url is not None
        return RedisDeliveryBook(RedisState(config.bus.url, config.bus.prefix), config.retention.run_logs)
    from bot.triggers.deliveries import DeliveryBook, deliveries_path

    return DeliveryBook(deliveries_path(config.state_dir))

"""The backend switch: which `Stores` a config gets, local files or Redis."""

from __future__ import annotations

from bot.app.stores import Stores
from bot.config.schema import Config


def stores_for(config: Config) -> Stores:
    """The stores `bus.backend` names; the only place that reads it."""
    if config.bus.backend == "redis":
        from bot.app.redis_stores import RedisStores

        return RedisStores(config)
    from bot.app.local_stores import LocalStores

    return LocalStores(config)

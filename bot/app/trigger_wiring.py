"""The gateway's triggers: the desk behind POST /hooks/<name>, its deliveries, its runs, the own sessions' relay."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from bot.bus import MessageBus
from bot.config.schema import Config
from bot.errors import ConfigError
from bot.events import EventBus
from bot.ops.control import Handler
from bot.triggers.deliveries import Deliveries
from bot.triggers.desk import TriggerDesk
from bot.triggers.routes import hook_routes
from bot.triggers.runs import TriggerRuns
from bot.triggers.targets import check_targets
from channels.gateway.trigger_relay import TriggerRelay

if TYPE_CHECKING:
    from aiohttp import web

WAIT = 30.0
MAX_WAIT = 600.0


class GatewayTriggers:
    """Everything triggers need in a gateway; built only when `triggers:` lists some."""

    def __init__(self, config: Config, bus: MessageBus, channel_keys: Iterable[str], book: Deliveries) -> None:
        """Raise ConfigError naming the key for a target on no running channel, or with no HTTP server to serve on."""
        if not (config.channels.api.enabled or config.health.port is not None):
            served = "they are served on the gateway's HTTP server: enable channels.api or set health.port"
            raise ConfigError(served, "triggers")
        check_targets(config, channel_keys)
        self.book = book
        self.desk = TriggerDesk(config.triggers, book=self.book, publish=bus.publish_inbound)
        self.runs = TriggerRuns(self.book)
        self.routes: list[web.RouteDef] = hook_routes(self.desk)
        own = {trigger.name: trigger.target for trigger in config.triggers if trigger.session == "own"}
        self.relay = TriggerRelay(own, bus.publish_outbound) if own else None

    def start(self, events: EventBus) -> None:
        """Follow the runs' turns in `events`."""
        self.runs.follow(events)

    def stop(self) -> None:
        """Stop following and release the deliveries' store."""
        self.runs.stop()
        self.book.close()

    def control_handlers(self) -> dict[str, Handler]:
        """`triggers.wait` {runId, timeout?}: the run's outcome and reply once it ended (`relaybot triggers test`)."""

        async def wait(request: dict[str, Any]) -> dict[str, Any]:
            timeout = request.get("timeout", WAIT)
            if not isinstance(timeout, int | float) or not 0 <= timeout <= MAX_WAIT:
                return {"ok": False, "error": f"timeout is seconds from 0 to {MAX_WAIT:.0f}"}
            ended = await self.runs.wait(str(request.get("runId", "")), float(timeout))
            if ended is None:
                return {"ok": True, "status": "timeout"}
            return {"ok": True, "status": "ended", "outcome": ended.outcome, "reply": ended.reply}

        return {"triggers.wait": wait}

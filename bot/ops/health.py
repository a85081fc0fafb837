"""What /readyz and /metrics answer for a gateway: its channels, their last polls, the model, and the figures."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from bot.config.schema import Config
from bot.telemetry.prometheus import BusStatsSource, PrometheusFigures

MODEL_PROBE_EVERY = 30.0  # seconds a model probe's answer is reused


class ChannelsView(Protocol):
    """What readiness reads from the channel manager: who is connected, and when each last polled."""

    def connected(self) -> Mapping[str, bool]: ...

    def liveness(self) -> Mapping[str, Any]: ...  # each channel's last poll, judged by the `fresh` given


class GatewayHealth:
    """Ready when every channel is connected and polled lately, and the model server (if one is named) answers."""

    def __init__(
        self,
        config: Config,
        manager: ChannelsView,
        figures: PrometheusFigures,
        fresh: Callable[[Any], bool],
        bus_stats: BusStatsSource,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._config = config
        self._manager = manager
        self._figures = figures
        self._fresh = fresh  # whether a channel's last poll is recent enough (the gateway's watchdog rule)
        self._bus_stats = bus_stats
        self._clock = clock
        self._model: tuple[float, bool, str] | None = None

    async def readiness(self) -> tuple[bool, dict[str, Any]]:
        """Whether the gateway is ready, with each channel's and the model's state, and the dead letters waiting
        (they do not make it unready: the operator's `relaybot queue` deals with them)."""
        channels: dict[str, str] = {}
        live = self._manager.liveness()
        for name, connected in self._manager.connected().items():
            if not connected:
                channels[name] = "not connected"
            elif name in live and not self._fresh(live[name]):
                channels[name] = f"no successful poll for {live[name].age():.0f}s"
            else:
                channels[name] = "ok"
        model_ok, model = await self._model_state()
        ready = model_ok and all(state == "ok" for state in channels.values())
        stats = await self._bus_stats()
        dead = {"count": stats.dead_letters, "since": stats.oldest_dead}
        return ready, {"channels": channels, "model": model, "dead_letters": dead}

    async def metrics(self) -> bytes:
        """The figures in Prometheus text."""
        return await self._figures.render()

    async def _model_state(self) -> tuple[bool, str]:
        from bot.llm.transports.openai_endpoint import server_base

        if server_base(self._config.llm) is None:
            return True, "hosted provider (not probed)"
        now = self._clock()
        if self._model is None or now - self._model[0] > MODEL_PROBE_EVERY:
            from bot.setup.model_check import check_model

            check = await check_model(self._config)
            self._model = (now, check.status == "ok", check.detail)
        return self._model[1], self._model[2]

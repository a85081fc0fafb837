"""/healthz, /readyz and /metrics over HTTP: on the API channel's server, or a small listener of their own."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Protocol

from aiohttp import web

logger = logging.getLogger(__name__)

PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8"


class HealthProbe(Protocol):
    """What the core answers: whether it is ready (and why not), and its figures in Prometheus text."""

    async def readiness(self) -> tuple[bool, dict[str, Any]]: ...

    async def metrics(self) -> bytes: ...


def add_health_routes(app: web.Application, probe: HealthProbe) -> None:
    """Mount /healthz (the event loop answers), /readyz (200 or 503 with the reasons) and /metrics."""

    async def healthz(request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    async def readyz(request: web.Request) -> web.Response:
        ready, detail = await probe.readiness()
        return web.json_response({"ready": ready, **detail}, status=200 if ready else 503)

    async def metrics(request: web.Request) -> web.Response:
        return web.Response(body=await probe.metrics(), headers={"Content-Type": PROMETHEUS_TEXT})

    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics)


class HealthServer:
    """A listener serving the health routes and any webhooks, for gateways without the API channel (`health.port`)."""

    def __init__(self, host: str, port: int, probe: HealthProbe, webhooks: Sequence[web.RouteDef] = ()) -> None:
        self._host = host
        self.port = port
        self._probe = probe
        self._webhooks = webhooks
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        app = web.Application()
        add_health_routes(app, self._probe)
        app.router.add_routes(self._webhooks)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, self._host, self.port).start()
        self.port = self._runner.addresses[0][1]
        logger.info("health: serving /healthz, /readyz and /metrics on http://%s:%d/", self._host, self.port)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

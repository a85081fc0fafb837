"""An aiohttp app served on a free port of 127.0.0.1, for the fakes that need nothing more."""

from __future__ import annotations

from typing import Self

from aiohttp import web


class LoopbackSite:
    """Serves `app` on 127.0.0.1 from `start()` (which returns the port) until `stop()`."""

    def __init__(self, app: web.Application) -> None:
        self._runner = web.AppRunner(app, access_log=None)

    async def start(self, port: int = 0) -> int:
        """Serve on `port` (0: a free one); the port served on."""
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", port).start()
        return int(self._runner.addresses[0][1])

    async def stop(self) -> None:
        await self._runner.cleanup()


class LoopbackServer:
    """`async with` a fake server: the routes it adds in `routes` are served on 127.0.0.1 at `port` while entered."""

    def __init__(self) -> None:
        self.port = 0
        self._site: LoopbackSite | None = None

    def routes(self, app: web.Application) -> None:
        """Add the fake's routes to `app`."""
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        app = web.Application()
        self.routes(app)
        self._site = LoopbackSite(app)
        self.port = await self._site.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._site is not None:
            await self._site.stop()

"""An aiohttp app served on a free port of 127.0.0.1, for the fakes that need nothing more."""

from __future__ import annotations

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

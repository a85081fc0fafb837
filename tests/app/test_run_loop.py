import asyncio

import uvloop

from bot.app.serve import run_loop


def test_the_gateway_loop_is_uvloop_where_it_is_installed() -> None:
    async def main() -> int:
        assert isinstance(asyncio.get_running_loop(), uvloop.Loop)
        await asyncio.sleep(0)
        return 3

    assert run_loop(main()) == 3

"""The control socket's agent ops when the API channel is off."""

from __future__ import annotations

from channels.api.rpc.control import NO_API, control_handlers


async def test_agent_ops_refuse_in_one_line_without_the_api_channel() -> None:
    handlers = control_handlers(None)
    assert await handlers["agent"]({"op": "agent", "message": "hi"}) == {"ok": False, "error": NO_API}
    assert await handlers["agent.wait"]({"op": "agent.wait", "runId": "x"}) == {"ok": False, "error": NO_API}

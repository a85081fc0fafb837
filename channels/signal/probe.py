"""`relaybot doctor` for Signal: the signal-cli daemon answers at `url` and serves `account`."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from bot.config.channels.base import ChannelSection
from bot.setup.check import Check

if TYPE_CHECKING:
    from bot.config.channels.signal import SignalConfig


async def check_signal(name: str, section: ChannelSection, timeout: float, where: str) -> list[Check]:
    """One line: the daemon answers a listGroups call naming the account, or which key to fix."""
    import aiohttp

    config = cast("SignalConfig", section)
    label = f"{name} daemon"
    if not config.account:
        return [Check(label, "fail", f"{where}.account is empty", f"set {where}.account to the bot's number (+…)")]
    request = {"jsonrpc": "2.0", "method": "listGroups", "params": {"account": config.account}, "id": 1}
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as http,
            http.post(f"{config.url.rstrip('/')}/api/v1/rpc", json=request) as response,
        ):
            answer = await response.json(content_type=None)
    except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
        fix = f"start `signal-cli -a {config.account} daemon --http` or correct {where}.url"
        return [Check(label, "fail", f"not reachable at {config.url} ({type(exc).__name__})", fix)]
    error = answer.get("error") if isinstance(answer, dict) else {"message": f"HTTP {response.status}"}
    if error:
        fix = f"register or link {config.account} in signal-cli, or correct {where}.account"
        return [Check(label, "fail", f"does not serve {config.account}: {error.get('message')}", fix)]
    groups = len(answer.get("result") or [])
    return [Check(label, "ok", f"{config.url} serves {config.account} ({groups} groups)")]

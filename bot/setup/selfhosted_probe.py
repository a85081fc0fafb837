"""Asking the servers users run whether relaybot's settings work: Mattermost's /users/me (and the callback URL),
the signal-cli daemon's check endpoint and whether it serves the account."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.setup.check import Check

if TYPE_CHECKING:
    from bot.config.channels.mattermost import MattermostConfig
    from bot.config.channels.signal import SignalConfig

MATTERMOST = "channels.mattermost"
SIGNAL = "channels.signal"


async def check_mattermost(section: MattermostConfig, timeout: float) -> list[Check]:
    """The token against the server, then whether buttons and slash commands have a way back to the gateway."""
    import aiohttp

    label, token = "mattermost token", section.token.get_secret_value()
    if not section.url:
        return [Check(label, "fail", f"{MATTERMOST}.url is empty", f"set {MATTERMOST}.url to the server's address")]
    if not token:
        return [Check(label, "fail", f"{MATTERMOST}.token is empty", f"set {MATTERMOST}.token, the bot's access token")]
    url = f"{section.url.rstrip('/')}/api/v4/users/me"
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as http,
            http.get(url, headers={"Authorization": f"Bearer {token}"}) as response,
        ):
            body = await response.json(content_type=None)
    except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
        fix = f"check {MATTERMOST}.url and that the server is up"
        return [Check(label, "fail", f"cannot reach {section.url} ({type(exc).__name__})", fix)]
    if response.status != 200 or not isinstance(body, dict):
        said = body.get("message") if isinstance(body, dict) else None
        fix = f"put the bot account's access token in {MATTERMOST}.token"
        return [Check(label, "fail", f"rejected by the server: {said or response.status}", fix)]
    token_check = Check(label, "ok", f"accepted (@{body.get('username')})")
    if section.callback_url:
        return [
            token_check,
            Check("mattermost callbacks", "ok", f"buttons and slash commands call {section.callback_url}"),
        ]
    fix = f"set {MATTERMOST}.callback_url to the gateway's address as the Mattermost server reaches it"
    return [
        token_check,
        Check("mattermost callbacks", "warn", "no callback_url: numbered choices, no slash commands", fix),
    ]


async def check_signal(section: SignalConfig, timeout: float) -> Check:
    """The daemon answers at `url`, and serves `account` (a listGroups call naming it)."""
    import aiohttp

    label = "signal daemon"
    if not section.account:
        return Check(label, "fail", f"{SIGNAL}.account is empty", f"set {SIGNAL}.account to the bot's number (+…)")
    request = {"jsonrpc": "2.0", "method": "listGroups", "params": {"account": section.account}, "id": 1}
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as http,
            http.post(f"{section.url.rstrip('/')}/api/v1/rpc", json=request) as response,
        ):
            answer = await response.json(content_type=None)
    except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
        fix = f"start `signal-cli -a {section.account} daemon --http` or correct {SIGNAL}.url"
        return Check(label, "fail", f"not reachable at {section.url} ({type(exc).__name__})", fix)
    error = answer.get("error") if isinstance(answer, dict) else {"message": f"HTTP {response.status}"}
    if error:
        fix = f"register or link {section.account} in signal-cli, or correct {SIGNAL}.account"
        return Check(label, "fail", f"does not serve {section.account}: {error.get('message')}", fix)
    return Check(label, "ok", f"{section.url} serves {section.account} ({len(answer.get('result') or [])} groups)")

"""Discord's failures (discord.py's exceptions and the network's) as the bot's error tree, in one place."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from bot.errors import ChannelError, ChannelUnavailable, RateLimited

T = TypeVar("T")


def translate_error(exc: BaseException) -> ChannelError:
    """discord.py's and the network's failures as our error tree (429 and 5xx outlasted discord.py's own retries)."""
    import aiohttp
    import discord

    if isinstance(exc, discord.RateLimited):
        return RateLimited(exc.retry_after)
    if isinstance(exc, discord.LoginFailure):
        return ChannelError("Discord refused the bot token; check channels.discord.token")
    if isinstance(exc, discord.PrivilegedIntentsRequired):
        return ChannelError("Discord refused the Message Content intent; switch it on in the developer portal (Bot)")
    if isinstance(exc, discord.HTTPException):
        if exc.status == 429:
            return RateLimited(float(exc.response.headers.get("Retry-After") or 1))
        detail = f"Discord answered {exc.status} (code {exc.code}): {exc.text}"
        code = str(exc.code)
        return ChannelUnavailable(detail, code=code) if exc.status >= 500 else ChannelError(detail, code=code)
    if isinstance(exc, discord.ConnectionClosed):
        return ChannelError(f"Discord closed the gateway ({exc.code}: {exc.reason})")
    if isinstance(exc, discord.GatewayNotFound | OSError | aiohttp.ClientError):
        return ChannelUnavailable(f"Discord is unreachable ({type(exc).__name__}: {exc})")
    return ChannelError(f"{type(exc).__name__}: {exc}")


async def call_discord(make: Callable[[], Awaitable[T]]) -> T:
    """Run one discord.py call, translating its errors into ours."""
    import aiohttp
    import discord

    try:
        return await make()
    except (discord.DiscordException, aiohttp.ClientError, OSError) as exc:
        raise translate_error(exc) from exc

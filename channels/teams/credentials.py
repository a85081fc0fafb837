"""The bot's own access token for the Bot Connector: OAuth client credentials (app id and secret), kept until
five minutes before it expires."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from bot.errors import ChannelError, ChannelUnavailable

if TYPE_CHECKING:
    import aiohttp

MARGIN = 300.0  # a token is renewed this many seconds before it expires


class BotCredentials:
    """`await token()` is a valid bearer token for the Connector, fetched from `token_url` when needed."""

    def __init__(
        self,
        http: aiohttp.ClientSession,
        token_url: str,
        app_id: str,
        app_password: str,
        scope: str,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._http = http
        self._url = token_url
        self._form = {"grant_type": "client_credentials", "client_id": app_id, "client_secret": app_password}
        self._form["scope"] = scope
        self._clock = clock
        self._token = ""
        self._expires = float("-inf")
        self._lock = asyncio.Lock()

    async def token(self) -> str:
        """A bearer token good for at least five more minutes; ChannelError when the secret is refused."""
        async with self._lock:
            if self._clock() >= self._expires - MARGIN:
                self._token, lifetime = await self._fetch()
                self._expires = self._clock() + lifetime
            return self._token

    async def _fetch(self) -> tuple[str, float]:
        import aiohttp

        try:
            async with self._http.post(self._url, data=self._form) as response:
                answer = await response.json(content_type=None)
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise ChannelUnavailable(f"token endpoint unreachable: {type(exc).__name__}: {exc}") from exc
        except ValueError as exc:
            raise ChannelUnavailable("token endpoint answered with no JSON") from exc
        if response.status >= 500:
            raise ChannelUnavailable(f"token endpoint HTTP {response.status}")
        if response.status != 200 or not isinstance(answer, dict) or "access_token" not in answer:
            reason = answer.get("error_description") or answer.get("error") if isinstance(answer, dict) else None
            raise ChannelError(f"app id or secret refused: {reason or f'HTTP {response.status}'}")
        return str(answer["access_token"]), float(answer.get("expires_in") or 3600)

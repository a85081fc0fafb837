"""Inbound activities' JWTs (the Bot Connector's): signed by a key of the OpenID metadata's JWKS, from its issuer,
for our app id, within five minutes of now, for the activity's serviceUrl, by a key that endorses its channel.

The Agents SDK's own validator fetches keys only from Microsoft's fixed hosts, so `openid_metadata` (national
clouds, the tests' issuer) could not reach it; this checks the same claims with PyJWT, as the SDK does."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import aiohttp
    import jwt

LEEWAY = 300.0  # seconds of clock skew the Bot Framework allows
REFETCH_AFTER = 60.0  # an unknown key id fetches the key set again at most this often


class Unauthorized(Exception):
    """A request whose token is missing or does not verify; the message says why (for the log, never the user)."""


class ConnectorTokens:
    """Verifies the `Authorization: Bearer` header of each activity the Bot Connector posts."""

    def __init__(
        self, http: aiohttp.ClientSession, metadata_url: str, app_id: str, clock: Callable[[], float] = time.time
    ) -> None:
        self._http = http
        self._metadata_url = metadata_url
        self._app_id = app_id
        self._clock = clock
        self._issuer = ""
        self._keys: dict[str, tuple[jwt.PyJWK, tuple[str, ...]]] = {}
        self._fetched_at = float("-inf")
        self._lock = asyncio.Lock()

    async def verify(self, header: str | None, activity: Mapping[str, Any]) -> dict[str, Any]:
        """The token's claims when it is valid for `activity`; raise Unauthorized otherwise."""
        import jwt

        if not header or not header.startswith("Bearer "):
            raise Unauthorized("no bearer token")
        token = header.removeprefix("Bearer ").strip()
        try:
            kid = jwt.get_unverified_header(token).get("kid")
        except jwt.PyJWTError as exc:
            raise Unauthorized(f"malformed token: {exc}") from exc
        key, endorsements = await self._key(str(kid))
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key=key,
                algorithms=["RS256"],
                audience=self._app_id,
                issuer=self._issuer,
                leeway=LEEWAY,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.PyJWTError as exc:
            raise Unauthorized(f"token refused: {exc}") from exc
        channel = str(activity.get("channelId") or "")
        if endorsements and channel not in endorsements:
            raise Unauthorized(f"signing key does not endorse channel {channel!r}")
        service_url = claims.get("serviceurl")
        if service_url is not None and service_url != activity.get("serviceUrl"):
            raise Unauthorized("token's serviceurl is not the activity's")
        return claims

    async def _key(self, kid: str) -> tuple[jwt.PyJWK, tuple[str, ...]]:
        """The signing key `kid`, fetching the key set when it is unknown (not more than once a minute)."""
        async with self._lock:
            if kid not in self._keys and self._clock() - self._fetched_at >= REFETCH_AFTER:
                await self._fetch()
        if kid not in self._keys:
            raise Unauthorized(f"unknown signing key {kid!r}")
        return self._keys[kid]

    async def _fetch(self) -> None:
        import aiohttp
        import jwt

        try:
            async with self._http.get(self._metadata_url) as response:
                metadata = await response.json(content_type=None)
            async with self._http.get(metadata["jwks_uri"]) as response:
                key_set = await response.json(content_type=None)
        except (aiohttp.ClientError, TimeoutError, ValueError, KeyError, TypeError) as exc:
            raise Unauthorized(f"cannot read the signing keys from {self._metadata_url}: {exc}") from exc
        self._fetched_at = self._clock()
        self._issuer = str(metadata.get("issuer") or "")
        keys: dict[str, tuple[jwt.PyJWK, tuple[str, ...]]] = {}
        for entry in key_set.get("keys") or []:
            try:
                keys[str(entry["kid"])] = (jwt.PyJWK(entry, "RS256"), tuple(entry.get("endorsements") or ()))
            except (jwt.PyJWTError, KeyError):
                continue
        self._keys = keys

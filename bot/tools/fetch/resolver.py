"""The resolver web_fetch connects through: only addresses the policy allows (aiohttp, so loaded on first fetch)."""

from __future__ import annotations

import socket

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver

from bot.tools.fetch.netguard import AddressPolicy, BlockedAddress, allowed_host


class GuardedResolver(AbstractResolver):
    """Resolves names and keeps only addresses the policy allows, so the connection goes to a checked address.

    Checking inside the resolver (rather than resolving once up front) closes the DNS-rebinding gap:
    there is no second lookup between the check and the connect.
    """

    def __init__(self, allowed: AddressPolicy, inner: AbstractResolver | None = None) -> None:
        self._allowed = allowed
        self._inner = inner or DefaultResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        results = await self._inner.resolve(host, port, family)
        kept = [result for result in results if allowed_host(result["host"], self._allowed)]
        if not kept:
            found = ", ".join(sorted({result["host"] for result in results})) or "nothing"
            raise BlockedAddress(f"{host} resolves to {found}, which is not a public address")
        return kept

    async def close(self) -> None:
        await self._inner.close()

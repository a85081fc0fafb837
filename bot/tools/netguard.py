"""Which addresses web_fetch may reach, checked on the very addresses it connects to."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
AddressPolicy = Callable[[IPAddress], bool]


def is_public(address: IPAddress) -> bool:
    """True for globally routable unicast addresses; false for private, loopback, link-local, reserved, multicast."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is not None:
            return is_public(embedded)
    return address.is_global and not address.is_multicast


def any_address(address: IPAddress) -> bool:
    """The policy of `tools.web_fetch.allow_private: true`: every address may be reached."""
    return True


class BlockedAddress(OSError):
    """The host is, or resolves only to, addresses the policy refuses."""


def parse_address(host: str) -> IPAddress | None:
    """The IP address `host` spells out literally (brackets and zone allowed), or None for a name."""
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None


def check_literal(host: str, allowed: AddressPolicy) -> None:
    """Raise BlockedAddress when `host` is an IP literal the policy refuses; aiohttp skips the resolver for those."""
    address = parse_address(host)
    if address is not None and not allowed(address):
        raise BlockedAddress(f"{address} is not a public address")


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
        kept = [result for result in results if _allowed(result["host"], self._allowed)]
        if not kept:
            found = ", ".join(sorted({result["host"] for result in results})) or "nothing"
            raise BlockedAddress(f"{host} resolves to {found}, which is not a public address")
        return kept

    async def close(self) -> None:
        await self._inner.close()


def _allowed(host: str, allowed: AddressPolicy) -> bool:
    address = parse_address(host)
    return address is not None and allowed(address)

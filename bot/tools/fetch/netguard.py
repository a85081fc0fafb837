"""Which addresses web_fetch may reach, checked on the very addresses it connects to."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable

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


def allowed_host(host: str, allowed: AddressPolicy) -> bool:
    """Whether a resolved `host` (an address in text) is one the policy allows."""
    address = parse_address(host)
    return address is not None and allowed(address)

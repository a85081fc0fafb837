"""Is a webhook request really from its sender: an HMAC-SHA256 of the raw body, or a bearer token, in constant time."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping

from bot.config.schema_triggers import TriggerConfig

HMAC_PREFIX = "sha256="
BEARER_PREFIX = "bearer "


def signature(secret: str, body: bytes) -> str:
    """The signature GitHub sends for `body`: `sha256=` and the hex HMAC-SHA256 under `secret`."""
    return HMAC_PREFIX + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def signing_headers(trigger: TriggerConfig, body: bytes) -> dict[str, str]:
    """The header a sender adds to `body` to pass `trigger`'s verification (`relaybot triggers test`)."""
    secret = trigger.secret.get_secret_value()
    if trigger.verify == "bearer":
        value = f"Bearer {secret}" if trigger.signature_header.lower() == "authorization" else secret
        return {trigger.signature_header: value}
    return {trigger.signature_header: signature(secret, body)}


def verified(trigger: TriggerConfig, headers: Mapping[str, str], body: bytes) -> bool:
    """Whether the request carries `trigger`'s valid signature (or token); `headers` are keyed in lower case."""
    given = headers.get(trigger.signature_header.lower(), "").strip()
    secret = trigger.secret.get_secret_value()
    if trigger.verify == "bearer":
        if given[: len(BEARER_PREFIX)].lower() == BEARER_PREFIX:
            given = given[len(BEARER_PREFIX) :].strip()
        return bool(given) and hmac.compare_digest(given.encode(), secret.encode())
    if given[: len(HMAC_PREFIX)].lower() == HMAC_PREFIX:
        given = given[len(HMAC_PREFIX) :]
    expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return bool(given) and hmac.compare_digest(given.lower().encode(), expected.encode())

"""What the server answered a stanza with, translated into relaybot's errors in this one place.

A message stanza is not acknowledged; one that cannot be delivered comes back as `<message type='error'>` with the
same id (RFC 6120 §8.3). The bot pings its server after each message (XEP-0199): the server handles a client's
stanzas in order, so an error that comes before the pong is about that message, and the pong says it went through.
"""

from __future__ import annotations

from bot.errors import ChannelError, ChannelUnavailable

TRANSIENT = "wait"
"""RFC 6120 §8.3.2: an error of type `wait` may pass (resource-constraint, policy-violation under load)."""


def stanza_error(kind: str, condition: str, text: str) -> ChannelError:
    """The error a bounced message stands for: type `wait` is transient, any other (cancel, auth, modify) final."""
    reason = f"{condition}: {text}" if text else condition
    if kind == TRANSIENT:
        return ChannelUnavailable(reason, code=condition)
    return ChannelError(reason, code=condition)

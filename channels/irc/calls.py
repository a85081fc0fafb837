"""What the server answered a send with, translated into relaybot's errors in this one place.

IRC acknowledges nothing: a PRIVMSG that arrives is silent, one that does not is answered by an error numeric. The
bot sends a PING after its lines; the server handles a client's commands in order, so numerics that come before the
PONG are about those lines, and the PONG itself says the rest went through.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.errors import ChannelError, ChannelUnavailable, RateLimited

TRY_AGAIN = "263"
"""RPL_TRYAGAIN (RFC 2812 §5.1): the server dropped the command under load; it may pass later."""
TARGET_TOO_FAST = "439"
"""ERR_TARGETTOOFAST (Hybrid, ratbox, charybdis): `<target> :Target change too fast. Please wait <n> seconds.`"""
TARGETS_CHANGING = "707"
"""ERR_TARGCHANGE (solanum): `<target> :Targets changing too fast, message dropped`; no wait is named."""
REFUSALS = frozenset({"401", "403", "404", "406", "407", "411", "412", "413", "414", "477", "486", "492", "531"})
"""No such nick or channel, cannot send to channel, too many targets, no text, registered nicks only, and the
servers' own refusals of private messages (ERR_NONONREG 486, ERR_CANTSENDTOUSER 531): final for that target."""
SEND_ERRORS = REFUSALS | {TRY_AGAIN, TARGET_TOO_FAST, TARGETS_CHANGING}
"""Every numeric that answers a PRIVMSG."""

_WAIT = re.compile(r"wait (\d+) second", re.IGNORECASE)
DEFAULT_WAIT = 2.0
"""Seconds to wait when a server says "too fast" without naming how long."""


def send_error(numeric: str, params: Sequence[str]) -> ChannelError:
    """The error a numeric answering a PRIVMSG stands for; `params` are the numeric's, the bot's nick first."""
    text = params[-1] if params else numeric
    about = params[1] if len(params) > 2 else ""
    reason = f"{numeric} {about}: {text}".replace(" : ", " ") if about else f"{numeric} {text}"
    if numeric == TARGET_TOO_FAST:
        named = _WAIT.search(text)
        return RateLimited(float(named.group(1)) if named else DEFAULT_WAIT, reason)
    if numeric == TARGETS_CHANGING:
        return RateLimited(DEFAULT_WAIT, reason)
    if numeric == TRY_AGAIN:
        return ChannelUnavailable(reason, code=numeric)
    return ChannelError(reason, code=numeric)

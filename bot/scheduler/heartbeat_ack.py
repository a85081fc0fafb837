"""The heartbeat's acknowledgement: a reply of HEARTBEAT_OK (with at most a short remark) stays silent."""

from __future__ import annotations

HEARTBEAT_OK = "HEARTBEAT_OK"
MAX_ACK_CHARS = 60


def strip_ack(reply: str) -> str | None:
    """The reply without a leading or trailing HEARTBEAT_OK; None when nothing of substance is left."""
    text = reply.strip()
    bare = text.strip("*_`.!: \n")
    if bare.startswith(HEARTBEAT_OK):
        rest = bare[len(HEARTBEAT_OK) :]
    elif bare.endswith(HEARTBEAT_OK):
        rest = bare[: -len(HEARTBEAT_OK)]
    else:
        return text
    rest = rest.strip(" \n\t-–—:.,!*_`")
    if len(rest) <= MAX_ACK_CHARS:
        return None
    return rest

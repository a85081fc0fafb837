"""What the gateway knows about each channel's connection, for `relaybot status` and the doctor."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

ChannelState = Literal["starting", "connected", "failed"]


@dataclass(frozen=True, slots=True)
class ChannelHealth:
    """A channel's state since `since` (epoch seconds), its last start error and how often starting failed."""

    state: ChannelState
    since: float
    last_error: str | None = None
    failures: int = 0

    def as_dict(self) -> dict[str, Any]:
        """Plain fields, as sent over the control socket."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class MessageCounts:
    """Messages a channel published to the agent and messages delivered through it, since the gateway started."""

    inbound: int
    outbound: int

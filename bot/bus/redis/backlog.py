"""How far behind a stream's readers are: what a group holds unacknowledged, and what it has not read yet."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from redis.asyncio import Redis


@dataclass(frozen=True, slots=True)
class StreamBacklog:
    """One stream's backlog: entries read but not acknowledged, and entries not read yet."""

    stream: str
    pending: int
    unread: int


async def stream_backlog(redis: Redis, stream: str, group: str) -> StreamBacklog:
    """The backlog of `stream` for `group` (all of it unread when no reader ever created the group)."""
    found = {g["name"]: g for g in await redis.xinfo_groups(stream)} if await redis.exists(stream) else {}
    if group not in found:
        return StreamBacklog(stream, 0, int(await redis.xlen(stream)))
    return StreamBacklog(stream, int(found[group]["pending"]), int(found[group].get("lag") or 0))

"""Active chats in Redis, so a standby gateway on another machine catches up where the last holder stopped."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from bot.bus import ChatRef
from bot.cluster.redis import RedisState
from channels.catchup import CATCH_UP_CHATS, CATCH_UP_WINDOW, ActiveChat


class RedisActiveChats:
    """A channel's chats seen within `window` seconds: one hash, a field per chat holding its last message id.

    Past twice `limit` chats, the hash is cut back to the `limit` active most lately (amortised: once per `limit` new).
    """

    def __init__(
        self,
        state: RedisState,
        channel: str,
        window: float = CATCH_UP_WINDOW,
        clock: Callable[[], float] = time.time,
        limit: int = CATCH_UP_CHATS,
    ) -> None:
        self._state = state
        self._key = state.key("catchup", channel)
        self._window = window
        self._clock = clock
        self._limit = limit

    def seen(self, chat: ChatRef, message_id: str) -> None:
        """Record `message_id` as the last one seen in `chat`, now; the hash goes when the channel is quiet a window."""
        row = {
            "channel": chat.channel,
            "chat_id": chat.chat_id,
            "thread_id": chat.thread_id,
            "account": chat.account,
            "last_id": message_id,
        }
        pipe = self._state.client.pipeline()
        pipe.hset(self._key, chat.session_key, json.dumps({**row, "seen_at": self._clock()}))
        pipe.expire(self._key, int(self._window) + 60)
        pipe.hlen(self._key)
        if int(pipe.execute()[-1]) > 2 * self._limit:
            self._cut()

    def _cut(self) -> None:
        """Keep the `limit` chats active most lately."""
        rows = self._state.client.hgetall(self._key)
        by_age = sorted(rows, key=lambda field: float(json.loads(rows[field])["seen_at"]))
        self._state.client.hdel(self._key, *by_age[: -self._limit])

    def recent(self) -> list[ActiveChat]:
        """The chats seen within the window, oldest activity first; older ones are removed."""
        since = self._clock() - self._window
        chats, stale = [], []
        for field, raw in self._state.client.hgetall(self._key).items():
            row = json.loads(raw)
            if float(row["seen_at"]) < since:
                stale.append(field)
                continue
            chat = ChatRef(row["channel"], row["chat_id"], row.get("thread_id"), row.get("account"))
            chats.append(ActiveChat(chat, row["last_id"], float(row["seen_at"])))
        if stale:
            self._state.client.hdel(self._key, *stale)
        return sorted(chats, key=lambda c: c.seen_at)

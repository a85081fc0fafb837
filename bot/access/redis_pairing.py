"""Pairing in Redis: the same rules as `PairingBook`, shared by every gateway, worker and the CLI."""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bot.access.pairing import PAIRING_TTL, PendingPairing, claim_code, drop_expired, take_code
from bot.bus.redis.connection import as_text
from bot.cluster.redis import RedisState

if TYPE_CHECKING:
    from redis.client import Pipeline


class RedisPairingBook:
    """Per channel: a JSON list of pending codes (oldest first) and a set of approved ids.

    `request` and `approve` read, change and write a channel's list in a WATCH/MULTI transaction
    (retried when another process wrote it meanwhile), so two gateways never hand out two codes to
    one stranger and an approval never loses a code requested at the same moment.
    """

    def __init__(
        self,
        state: RedisState,
        clock: Callable[[], float] = time.time,
        choose: Callable[[str], str] = secrets.choice,
        max_pending: int = 10,
    ) -> None:
        self._state = state
        self._clock = clock
        self._choose = choose
        self._max_pending = max_pending

    def is_approved(self, channel: str, user_id: str) -> bool:
        """Whether an owner approved this sender, on any process."""
        return bool(self._state.client.sismember(self._approved_key(channel), user_id))

    def request(self, channel: str, user_id: str, name: str) -> tuple[str, bool]:
        """The sender's code and whether it is new; a full channel drops its oldest code, so nobody is locked out."""

        def change(entries: list[dict[str, Any]], pipe: Pipeline) -> tuple[str, bool]:
            return claim_code(entries, channel, user_id, name, self._clock(), self._choose, self._max_pending)

        return self._update(channel, change)

    def approve(self, channel: str, code: str, person: str | None = None) -> str | None:
        """Approve the sender holding `code` (linked to `person` when given); their user id, or None if no code
        matches."""

        def change(entries: list[dict[str, Any]], pipe: Pipeline) -> str | None:
            match = take_code(entries, code, self._clock())
            if match is None:
                return None
            pipe.sadd(self._approved_key(channel), match["user_id"])
            if person:
                pipe.hset(self._people_key, f"{channel}:{match['user_id']}", person)
            return str(match["user_id"])

        return self._update(channel, change)

    def revoke(self, channel: str, user_id: str) -> bool:
        """Remove an approved sender; False when they were not approved."""
        self._state.client.hdel(self._people_key, f"{channel}:{user_id}")
        return bool(self._state.client.srem(self._approved_key(channel), user_id))

    def pending(self) -> list[PendingPairing]:
        """Every live pending code, oldest first within its channel."""
        now = self._clock()
        result = []
        for channel in sorted(self._channels()):
            entries = self._decode(self._state.client.get(self._pending_key(channel)))
            drop_expired(entries, now)
            result += [
                PendingPairing(channel, e["code"], e["user_id"], e.get("name", ""), e["created"]) for e in entries
            ]
        return result

    def approved(self) -> dict[str, list[str]]:
        """Approved sender ids by channel."""
        client = self._state.client
        return {
            channel: sorted(map(as_text, client.smembers(self._approved_key(channel)))) for channel in self._channels()
        }

    def people(self) -> dict[str, str]:
        """Accounts (`channel:user_id`) linked to a person at approval (`--as`)."""
        raw = self._state.client.hgetall(self._people_key)
        return {as_text(account): as_text(person) for account, person in raw.items()}

    @property
    def _people_key(self) -> str:
        return self._state.key("pairing", "people")

    def _update(self, channel: str, change: Callable[[list[dict[str, Any]], Pipeline], Any]) -> Any:
        """Run `change` on the channel's pending list and write it back atomically, retrying on a conflict."""
        key = self._pending_key(channel)

        def transaction(pipe: Pipeline) -> Any:
            entries = self._decode(pipe.get(key))
            pipe.multi()
            result = change(entries, pipe)
            pipe.set(key, json.dumps(entries), ex=int(PAIRING_TTL) + 60)  # every code in it is dead by then
            pipe.sadd(self._state.key("pairing", "channels"), channel)
            return result

        return self._state.client.transaction(transaction, key, value_from_callable=True)

    def _channels(self) -> set[str]:
        return set(map(as_text, self._state.client.smembers(self._state.key("pairing", "channels"))))

    def _pending_key(self, channel: str) -> str:
        return self._state.key("pairing", "pending", channel)

    def _approved_key(self, channel: str) -> str:
        return self._state.key("pairing", "approved", channel)

    @staticmethod
    def _decode(raw: bytes | str | None) -> list[dict[str, Any]]:
        return list(json.loads(raw)) if raw else []

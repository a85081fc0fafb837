"""The deliveries each trigger took, in Redis: every gateway of a cluster knows a delivery id another one took."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, replace

from bot.cluster.redis import RedisState
from bot.triggers.deliveries import Delivery


class RedisDeliveryBook:
    """One key per delivery (kept `keep` seconds, None: for good), one per run naming it, one per trigger's latest."""

    def __init__(self, state: RedisState, keep: float | None, clock: Callable[[], float] = time.time) -> None:
        self._state = state
        self._keep = int(keep) if keep else None
        self._clock = clock

    def _key(self, trigger: str, delivery: str) -> str:
        return self._state.key("triggers", "delivery", trigger, delivery)

    def _read(self, key: str | None) -> Delivery | None:
        raw = self._state.client.get(key) if key else None
        return Delivery(**json.loads(str(raw))) if raw else None

    def _pointed(self, *parts: str) -> str | None:
        """The delivery key a run's or a trigger's pointer names."""
        key = self._state.client.get(self._state.key("triggers", *parts))
        return str(key) if key else None

    def known(self, trigger: str, delivery: str) -> Delivery | None:
        """The delivery as first taken, or None when this id is new."""
        return self._read(self._key(trigger, delivery))

    def take(self, trigger: str, delivery: str, run_id: str | None, event: str, outcome: str) -> Delivery:
        """Record a delivery (the first record of an id wins, across gateways) and return the one recorded."""
        key = self._key(trigger, delivery)
        taken = Delivery(trigger, delivery, run_id, event, int(self._clock() * 1000), outcome)
        client = self._state.client
        if client.set(key, json.dumps(asdict(taken)), nx=True, ex=self._keep):
            pipe = client.pipeline()
            if run_id is not None:
                pipe.set(self._state.key("triggers", "run", run_id), key, ex=self._keep)
            pipe.set(self._state.key("triggers", "last", trigger), key, ex=self._keep)
            pipe.execute()
            return taken
        found = self._read(key)
        return found if found is not None else taken

    def finish(self, run_id: str, outcome: str) -> None:
        """Note how a delivery's run ended."""
        key = self._pointed("run", run_id)
        found = self._read(key)
        if key and found is not None:
            self._state.client.set(key, json.dumps(asdict(replace(found, outcome=outcome))), xx=True, keepttl=True)

    def last(self, trigger: str) -> Delivery | None:
        """The trigger's latest delivery, or None before its first (or once it expired)."""
        return self._read(self._pointed("last", trigger))

    def close(self) -> None:
        """Close the connection."""
        self._state.client.close()

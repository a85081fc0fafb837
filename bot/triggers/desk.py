"""The trigger desk: a webhook request in, an answer out; a verified new delivery becomes a turn, journaled first.

Framework-free: the HTTP route hands it the trigger's name, the headers, the raw body and the caller's address.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.bus import InboundMessage
from bot.config.schema_triggers import TRIGGER_CHANNEL, TriggerConfig, rate_window
from bot.errors import BusClosed
from bot.storage.compact_json import dumps
from bot.triggers.deliveries import Deliveries
from bot.triggers.delivery_ids import delivery_id, run_id
from bot.triggers.rate import RateLimit
from bot.triggers.templates import fill, turn_text
from bot.triggers.verification import verified

logger = logging.getLogger(__name__)

PING = "ping"

Publish = Callable[[InboundMessage], Awaitable[bool]]


@dataclass(frozen=True, slots=True)
class HookRequest:
    """A request to `POST /hooks/<name>`: headers keyed in lower case, the body as it came."""

    name: str
    headers: Mapping[str, str]
    body: bytes
    address: str = ""


@dataclass(frozen=True, slots=True)
class HookAnswer:
    """The HTTP answer: status, JSON body, extra headers."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TriggerRun:
    """A run a delivery started: its id (the inbound message's), the trigger, and the session it runs in."""

    run_id: str
    trigger: str
    session_key: str


def trigger_sender(name: str) -> str:
    """The sender a trigger's turns are charged to in the usage ledger (and `budgets.senders` names)."""
    return f"{TRIGGER_CHANNEL}:{name}"


class TriggerDesk:
    """Verifies, filters, dedupes and rate-limits deliveries, and publishes each new one as a system message."""

    def __init__(
        self,
        triggers: list[TriggerConfig],
        book: Deliveries,
        publish: Publish,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._triggers = {trigger.name: trigger for trigger in triggers}
        self._limits = {trigger.name: RateLimit(*rate_window(trigger.rate), clock=clock) for trigger in triggers}
        self._book = book
        self._publish = publish
        self._watchers: list[Callable[[TriggerRun], object]] = []

    def max_bytes(self, name: str) -> int | None:
        """The body size limit of trigger `name`, or None when there is no such trigger."""
        trigger = self._triggers.get(name)
        return trigger.max_bytes if trigger else None

    def watch(self, watcher: Callable[[TriggerRun], object]) -> None:
        """Call `watcher` with each run just before it is published, so it misses none of its events."""
        self._watchers.append(watcher)

    async def receive(self, request: HookRequest) -> HookAnswer:
        """Answer one request: 404, 413, 401, 200 (ping, ignored event, known delivery), 400, 429, 503 or 202."""
        trigger = self._triggers.get(request.name)
        if trigger is None:
            return HookAnswer(404, {"error": "no such trigger"})
        if len(request.body) > trigger.max_bytes:
            return HookAnswer(413, {"error": f"the body is over {trigger.max_bytes} bytes"})
        if not verified(trigger, request.headers, request.body):
            logger.warning("trigger %s: bad or missing signature from %s; refused", trigger.name, request.address)
            return HookAnswer(401, {"error": "bad or missing signature"})
        event = request.headers.get(trigger.event_header.lower(), "").strip()
        payload, text = _parsed(request.body)
        delivery = delivery_id(trigger.delivery_id, request.headers, payload)
        if event == PING:
            self._note(trigger, delivery, event, "ping")
            return HookAnswer(200, {"ok": True, "ping": "pong"})
        if trigger.events and event not in trigger.events:
            self._note(trigger, delivery, event, "ignored")
            return HookAnswer(200, {"ok": True, "ignored": f"event {event!r} is not one of this trigger's events"})
        if delivery is not None and (first := self._book.known(trigger.name, delivery)) is not None:
            return _known(first.run_id, first.accepted_at)
        if payload is None and (trigger.needs_fields or trigger.delivery_id.startswith("json:")):
            return HookAnswer(400, {"error": "the body is not JSON, and this trigger reads fields from it"})
        wait = self._limits[trigger.name].take()
        if wait is not None:
            return HookAnswer(429, {"error": "too many deliveries; try again later"}, {"Retry-After": str(wait)})
        message = self._message(trigger, event, payload, text, run_id(trigger.name, delivery))
        run = TriggerRun(message.id, trigger.name, message.chat.session_key)
        for watcher in self._watchers:
            watcher(run)
        try:
            fresh = await self._publish(message)  # journaled: from here a crash loses nothing
        except BusClosed:
            return HookAnswer(503, {"error": "the bot is stopping; send it again soon"}, {"Retry-After": "30"})
        record = self._book.take(trigger.name, delivery or message.id, message.id, event, "accepted")
        if not fresh or record.run_id != message.id:
            return _known(record.run_id, record.accepted_at)
        logger.info("trigger %s: delivery %s accepted as run %s", trigger.name, delivery or "-", message.id)
        return HookAnswer(202, {"runId": message.id, "acceptedAt": record.accepted_at})

    def _note(self, trigger: TriggerConfig, delivery: str | None, event: str, outcome: str) -> None:
        """Remember a delivery that starts no turn (a ping, an event not asked for), for `relaybot triggers list`."""
        if delivery is not None:
            self._book.take(trigger.name, delivery, None, event, outcome)

    def _message(
        self, trigger: TriggerConfig, event: str, payload: object, text: str, message_id: str
    ) -> InboundMessage:
        filled = fill(trigger.prompt, payload if payload is not None else {}, event)
        return InboundMessage(
            trigger.session_chat,
            sender_id=trigger_sender(trigger.name),
            text=turn_text(trigger.name, event, filled, text, trigger.payload_chars),
            trust=trigger.trust,
            sender_name=f"trigger {trigger.name}",
            is_direct=trigger.session == "own",
            kind="system",
            origin="trigger",
            charge_to=trigger_sender(trigger.name),
            id=message_id,
        )


def _known(run: str | None, accepted_at: int) -> HookAnswer:
    """A delivery seen before: 200 with its first run's id, and nothing started."""
    return HookAnswer(200, {"runId": run, "acceptedAt": accepted_at, "duplicate": True})


def _parsed(body: bytes) -> tuple[object, str]:
    """The JSON body (None when it is not JSON) and the text the model reads."""
    text = body.decode("utf-8", errors="replace")
    try:
        payload = json.loads(text)
    except ValueError:
        return None, text
    return payload, dumps(payload)

"""The API channel: an aiohttp server carrying the agent's stream events to WebSocket, HTTP and web clients."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar

from aiohttp import web

from bot.bus import Attachment, ChatRef, EarlierMessage, InboundMessage, OutboundMessage, new_id
from bot.config.channels.api import ApiConfig
from bot.events import CronSkipped, Event, EventBus, HeartbeatTicked, TurnFinished
from channels.api import admin, pages, uploads, ws
from channels.api.admin import AdminBackend
from channels.api.frames import Frame, event_frame, message_frame
from channels.api.hub import CHANNEL, OWNERS, Hub
from channels.api.openai import endpoint as openai_endpoint
from channels.api.rpc import http as agent_http
from channels.api.rpc.methods import Watch
from channels.api.rpc.runs import Run, RunBook, run_topic
from channels.api.web import front_door, login
from channels.api.web.auth import Caller, FailureLockout, TokenBook
from channels.api.web.gate import Gatekeeper
from channels.api.web.origins import OriginPolicy
from channels.api.web.sessions import WebSessions
from channels.base import Channel, Publish
from channels.health_http import HealthProbe, add_health_routes
from channels.numbered import NumberedChoices

logger = logging.getLogger(__name__)

IDLE_HOLD = 10.0  # seconds a turn's `idle` status waits for its reply (a plugin may have held the reply back)


class ApiChannel(Channel):
    """Serves /ws, /v1, the web chat and (given a backend) the dashboard; one session per token and session name."""

    name: ClassVar[str] = CHANNEL

    def __init__(
        self,
        publish: Publish,
        config: ApiConfig,
        events: EventBus,
        admin: AdminBackend | None = None,
        lockout: FailureLockout | None = None,
        history: Callable[[str], list[Frame]] = lambda key: [],
        health: HealthProbe | None = None,
        webhooks: Sequence[web.RouteDef] = (),
        staging: Path | None = None,
    ) -> None:
        """`webhooks` are other channels' routes (a platform calling in) served beside the API's own; `staging` is
        where the web chat's uploads wait for the router (None: no uploads)."""
        self._publish = publish
        self.staging = staging
        self._config = config
        self._events = events
        self.hub = Hub()
        self.runs = RunBook(config.show_reasoning, emit=self._emit_runs)
        self.gate = Gatekeeper(
            TokenBook(config.tokens), lockout or FailureLockout(), WebSessions(), OriginPolicy(config.allowed_origins)
        )
        self._client_ids: dict[str, str] = {}
        self._idle: dict[str, tuple[str, Frame]] = {}  # turn id -> (session, its `idle` status), held for its reply
        self._choices = NumberedChoices()
        self._admin = admin
        self._history = history
        self._health = health
        self._webhooks = webhooks
        self._runner: web.AppRunner | None = None
        self._unsubscribe: Callable[[], None] = lambda: None
        self.port = config.port

    async def start(self) -> None:
        if self._config.allow_remote:
            logger.warning("api: allow_remote is on; listening on %s, reachable from other machines", self._config.host)
        app = web.Application()
        front_door.install(app)
        login.add_routes(app, self.gate)
        ws.add_routes(app, self)
        openai_endpoint.add_routes(app, self)
        agent_http.add_routes(app, self)
        pages.add_routes(app, self)
        uploads.add_routes(app, self)
        if self._admin is not None:
            admin.add_routes(app, self.gate, self._admin)
        if self._health is not None:
            add_health_routes(app, self._health)
        app.router.add_routes(self._webhooks)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self._config.host, self._config.port)
        await site.start()
        self.port = self._runner.addresses[0][1]
        self._unsubscribe = self._events.subscribe(self._on_event)
        logger.info("api: serving on http://%s:%d/", self._config.host, self.port)

    async def stop(self) -> None:
        self._unsubscribe()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def send(self, message: OutboundMessage) -> None:
        """Hand a message to its session's watchers; the final reply of a turn comes here exactly once."""
        key = message.chat.session_key
        client_id = self._client_ids.pop(message.in_reply_to, None) if message.in_reply_to else None
        frame = message_frame(message, client_id or message.in_reply_to)
        if message.choices:
            frame["text"] = self._choices.shown(message)
            frame["choices"] = [{"id": choice.id, "label": choice.label} for choice in message.choices]
            frame["prompt_id"] = message.prompt_id
        self.hub.emit(key, frame)
        self._emit_runs(self.runs.replied(message))
        if message.kind != "progress" and message.in_reply_to:
            self._release_idle(message.in_reply_to)

    async def start_run(
        self,
        caller: Caller,
        chat: ChatRef,
        text: str,
        idempotency_key: str | None = None,
        watch: Watch = None,
        conversation: tuple[EarlierMessage, ...] = (),
    ) -> Run:
        """Start a run in the caller's session with the caller's role; a known idempotency key returns its run.

        `watch` is called with the run before it is published, so a watcher misses none of its events;
        a `conversation` replaces the session's history for this one turn.
        """
        known = self.runs.known(caller.name, idempotency_key)
        if known is not None:
            if watch is not None:
                watch(known)
            return known
        message = InboundMessage(
            chat,
            f"api:{caller.name}",
            text,
            caller.trust,
            caller.name,
            stream=True,
            platform_message_id=new_id(),
            conversation=conversation,
            awaited=True,  # its caller gets the failure and retries itself: no dead letter whose answer nobody reads
        )
        run = self.runs.add(message.id, caller.name, chat.session_key, idempotency_key)
        if watch is not None:
            watch(run)
        await self._publish(message)
        return run

    def adopt_run(self, run_id: str, owner: str, session_key: str) -> None:
        """Follow a run started elsewhere (a trigger's): every owner token may watch it, and owners hear it began."""
        self.runs.add(run_id, owner, session_key, adopted=True)
        self.hub.emit(OWNERS, {"type": "run", "runId": run_id, "owner": owner, "session": session_key})

    async def submit(
        self,
        caller: Caller,
        chat: ChatRef,
        text: str,
        client_id: str | None = None,
        attachments: tuple[Attachment, ...] = (),
    ) -> str:
        """Publish a caller's text, with the files uploaded for it (a number alone answers the latest choices);
        returns the client id the reply will name."""
        client_id = client_id or new_id()
        if not attachments and (pressed := self._choices.press(chat, text)) is not None:
            press, label = pressed
            who = f"api:{caller.name}"
            await self._publish(InboundMessage(chat, who, label, caller.trust, caller.name, press=press))
            return client_id
        message = InboundMessage(
            chat,
            sender_id=f"api:{caller.name}",
            text=text,
            trust=caller.trust,
            sender_name=caller.name,
            stream=True,
            attachments=attachments,
            platform_message_id=client_id,
        )
        self._client_ids[message.id] = client_id
        self.runs.add(message.id, caller.name, chat.session_key)  # every turn is a run the caller may wait for
        await self._publish(message)
        return client_id

    def history(self, key: str) -> list[Frame]:
        """The session's recent user texts and replies, from the session store so they outlive a restart."""
        return self._history(key)

    def _on_event(self, event: Event) -> None:
        if isinstance(event, CronSkipped):
            return
        if isinstance(event, HeartbeatTicked):  # belongs to no session: every owner's connection hears it
            self.hub.emit(OWNERS, {"type": "heartbeat", "outcome": event.outcome})
            return
        key = event.session_key
        turn_id = getattr(event, "turn_id", "")
        ours = key.startswith(f"{CHANNEL}:")  # other sessions' events matter only to adopted runs
        frame = event_frame(event, self._client_ids.get(turn_id, turn_id or None)) if ours else None
        if isinstance(event, TurnFinished) and event.replied and frame is not None:
            # The turn's reply reaches send() through the outbox, after this event: the client hears it first.
            self._idle[turn_id] = (key, frame)
            asyncio.get_running_loop().call_later(IDLE_HOLD, self._release_idle, turn_id)
        elif frame is not None:
            self.hub.emit(key, frame)
        self._emit_runs(self.runs.observe(event))
        if ours and isinstance(event, TurnFinished) and not event.replied:
            self._client_ids.pop(turn_id, None)

    def _release_idle(self, turn_id: str) -> None:
        """Send a turn's held `idle` status: after its reply, or after IDLE_HOLD when no reply came this way."""
        if (held := self._idle.pop(turn_id, None)) is not None:
            self.hub.emit(*held)

    def _emit_runs(self, frames: list[tuple[Run, Frame]]) -> None:
        for run, frame in frames:
            self.hub.emit(run_topic(run.id), frame)

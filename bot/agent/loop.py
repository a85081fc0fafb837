"""The agent loop: lanes keep one turn per session, a semaphore caps turns across sessions."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from bot.agent.account import AccountCommands
from bot.agent.budget import ContextBudget
from bot.agent.commands import GREETING, UNKNOWN_COMMAND, Command, help_text, is_unknown_command, parse_command
from bot.agent.consolidation import MemoryConsolidator
from bot.agent.context import ContextBuilder
from bot.agent.heartbeat_ack import is_heartbeat, strip_ack
from bot.agent.interruption import (
    CRASHED,
    MODEL_FAILED,
    RESTARTED,
    SHUT_DOWN,
    STOPPED,
    bounded,
    closing_results,
    timed_out,
    timeout_reply,
)
from bot.agent.memory import scope_for
from bot.agent.outbox import TurnOutbox
from bot.agent.owner_dm import LastOwnerDM, OwnerDM
from bot.agent.persona_turns import PersonaTurns
from bot.agent.session import Session, Sessions
from bot.agent.stream import StreamEmitter, is_silent
from bot.agent.turn import EMPTY_REPLY, TurnResult, TurnRunner
from bot.bus import TRUST_ORDER, ChatRef, InboundMessage, MessageBus, OutboundMessage, Trust, lowest_trust
from bot.config import AgentConfig
from bot.errors import BudgetExceeded, ProviderError, TurnTimedOut
from bot.events import ErrorOccurred, EventBus, TurnFinished, TurnStarted
from bot.llm import Usage
from bot.personas import Persona
from bot.plugins.events import (
    AgentEnd,
    BeforeAgentStart,
    Block,
    CommandInvoked,
    MessageReceived,
    MessageSending,
    MessageSent,
    Replace,
    SessionEnd,
    SessionStart,
)
from bot.plugins.hooks import Hooks
from bot.tools.base import ToolContext
from bot.transcription import Transcriber
from bot.usage.charge import charge_for, charged_to

logger = logging.getLogger(__name__)

ReplyKind = Literal["reply", "error"]
CRASH_REPLY = "Sorry, something went wrong on my side while answering. Please try again."


@dataclass
class _Lane:
    """The queue and running turn of one session."""

    pending: deque[InboundMessage] = field(default_factory=deque)
    worker: asyncio.Task[None] | None = None
    turn: asyncio.Task[None] | None = None
    stopped: bool = False


class AgentLoop:
    """Consumes the inbound bus and answers each message on the outbound bus."""

    def __init__(
        self,
        bus: MessageBus,
        runner: TurnRunner,
        sessions: Sessions,
        context: ContextBuilder,
        events: EventBus,
        config: AgentConfig,
        workspace: Path,
        memory: MemoryConsolidator | None = None,
        on_stop: Callable[[str], int] | None = None,
        personas: PersonaTurns | None = None,
        account: AccountCommands | None = None,
        budget: ContextBudget | None = None,
        owner_dm: OwnerDM | None = None,
        transcriber: Transcriber | None = None,
        hooks: Hooks | None = None,
    ) -> None:
        self._personas = personas
        self._account = account
        self._bus = bus
        self._runner = runner
        self._sessions = sessions
        self._context = context
        self._events = events
        self._config = config
        self._workspace = workspace
        self._memory = memory
        self._on_stop = on_stop
        self._budget = budget
        self._owner_dm: OwnerDM = owner_dm or LastOwnerDM()
        self._transcriber = transcriber
        self._hooks = hooks or Hooks()
        self._slots = asyncio.Semaphore(config.max_concurrent_turns)
        self._lanes: dict[str, _Lane] = {}
        self._dispatcher: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Begin consuming inbound messages."""
        self._dispatcher = asyncio.create_task(self._dispatch(), name="agent-dispatch")

    async def drain(self, grace: float) -> None:
        """Stop taking messages and give running turns up to `grace` seconds to finish."""
        if self._dispatcher:
            self._dispatcher.cancel()
            await asyncio.gather(self._dispatcher, return_exceptions=True)
            self._dispatcher = None
        for lane in self._lanes.values():
            lane.pending.clear()
        turns = [lane.turn for lane in self._lanes.values() if lane.turn]
        if turns:
            logger.warning("waiting up to %.0fs for %d running turns", grace, len(turns))
            await asyncio.wait(turns, timeout=grace)

    async def stop(self) -> None:
        """Stop consuming, cancel running turns (they stay pending in the bus) and wait for them to end."""
        tasks = [self._dispatcher] if self._dispatcher else []
        for lane in self._lanes.values():
            lane.pending.clear()
            tasks.extend(task for task in (lane.turn, lane.worker) if task)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._dispatcher = None

    @property
    def last_owner_chat(self) -> ChatRef | None:
        """The direct chat in which an owner wrote most recently (never a group)."""
        return self._owner_dm.chat

    def is_busy(self, session_key: str) -> bool:
        """Whether the session has a turn running or queued."""
        return session_key in self._lanes

    async def _dispatch(self) -> None:
        while True:
            message = await self._bus.consume_inbound()
            try:
                await self.accept(message)
            except Exception:
                logger.exception("[%s] could not accept message %s", message.chat.session_key, message.id)

    async def accept(self, message: InboundMessage) -> None:
        """Route one message: immediate commands now, everything else into its session's lane."""
        key = message.chat.session_key
        self._owner_dm.note(message)
        command = parse_command(message.text) if message.kind == "user" else None
        if command is Command.STOP:
            await self._stop_session(message)
            return
        if command is Command.HELP:
            await self._reply(message, help_text(message.chat.channel), completes=[message.id])
            return
        if command is Command.START:
            await self._reply(message, GREETING, completes=[message.id])
            return
        if command is Command.STATUS:
            await self._reply(message, self._status(message), completes=[message.id])
            return
        if command in (Command.USAGE, Command.PAIR) and self._account is not None:
            await self._reply(message, self._account.answer(command, message), completes=[message.id])
            return
        if message.kind == "user" and await self._plugin_command(message):
            return
        if message.kind == "user" and is_unknown_command(message.text):
            await self._reply(message, UNKNOWN_COMMAND, completes=[message.id])
            return
        if self._hooks.has("message_received"):
            event = MessageReceived(message.chat, message.sender_id, message.trust.value, message.text, message.id)
            decision = await self._hooks.run("message_received", event)
            if isinstance(decision, Block):
                await self._reply(message, decision.reason)
                return
            if isinstance(decision, Replace):
                message = replace(message, text=str(decision.value))
        lane = self._lanes.setdefault(key, _Lane())
        lane.pending.append(message)
        if lane.worker is None:
            lane.worker = asyncio.create_task(self._drain(key, lane), name=f"lane:{key}")

    async def _drain(self, key: str, lane: _Lane) -> None:
        """Run the session's queued turns one after another."""
        try:
            while lane.pending:
                async with self._slots:
                    batch = self._next_batch(lane.pending)
                    if not batch:
                        continue
                    lane.stopped = False
                    lane.turn = asyncio.create_task(self._process(batch, lane), name=f"turn:{key}")
                    try:
                        await lane.turn
                    except asyncio.CancelledError:
                        if asyncio.current_task().cancelling():  # type: ignore[union-attr]
                            raise
                    finally:
                        lane.turn = None
        finally:
            self._lanes.pop(key, None)

    def _next_batch(self, pending: deque[InboundMessage]) -> list[InboundMessage]:
        """One message, or in collect mode every queued message up to the next command."""
        if not pending:
            return []
        batch = [pending.popleft()]
        if self._config.queue_mode == "collect" and not _is_new_session(batch[0]):
            while pending and not _is_new_session(pending[0]):
                batch.append(pending.popleft())
        return batch

    async def _process(self, batch: list[InboundMessage], lane: _Lane) -> None:
        message = batch[-1]
        key = message.chat.session_key
        ids = [m.id for m in batch]
        if _is_new_session(message):
            closed = self._reset(message)
            await self._hook("session_end", SessionEnd(key, message.chat, closed))
            await self._reply(message, "Started a new conversation.", completes=ids)
            return
        await self._bus.begin_inbound(ids)
        started = time.perf_counter()
        self._events.emit(TurnStarted(message.chat, message.id))
        outbox = TurnOutbox(message.chat, self._bus.publish_outbound)
        outcome = "answered"
        iterations = 0
        reply: str | None = None
        kind: ReplyKind = "reply"
        heartbeat = any(is_heartbeat(m) for m in batch)
        try:
            steer = self._steering(lane, lowest_trust(batch), ids) if self._config.queue_mode == "steer" else None
            result = await bounded(self._run_turn(batch, outbox, steer=steer), self._config.turn_timeout)
            reply, iterations = result.text, result.iterations
            if result.hit_limit:
                outcome = "iteration limit"
            elif is_silent(result.text) or (heartbeat and strip_ack(result.text) is None):
                outcome, reply = "silent", None
            elif _already_said(result, outbox):
                outcome, reply = "answered by message", None
            elif heartbeat:
                reply = strip_ack(result.text)
        except asyncio.CancelledError:
            outcome = "cancelled"
            self._close_unfinished(key, STOPPED if lane.stopped else SHUT_DOWN)
            # Stopped by the user: handled. Stopped by a shutdown: the next start runs it again.
            await (self._bus.complete_inbound(ids) if lane.stopped else self._bus.release_inbound(ids))
            raise
        except TurnTimedOut as exc:
            outcome = "timed out"
            logger.warning("[%s] turn cancelled: %s", key, exc)
            self._close_unfinished(key, timed_out(exc.seconds))
            reply, kind = timeout_reply(exc.seconds), "error"
        except ProviderError as exc:
            outcome = "budget exceeded" if isinstance(exc, BudgetExceeded) else "provider error"
            self._close_unfinished(key, MODEL_FAILED)
            reply, kind = exc.user_message, "error"
            self._events.emit(ErrorOccurred(key, "llm", type(exc).__name__))
        except Exception as exc:
            outcome = "crashed"
            logger.exception("[%s] turn crashed", key)
            self._close_unfinished(key, CRASHED)
            reply, kind = CRASH_REPLY, "error"
            self._events.emit(ErrorOccurred(key, "turn", type(exc).__name__))
        finally:
            if heartbeat and kind == "error":
                reply = None  # nobody asked: a failed heartbeat is logged, never sent
            duration = time.perf_counter() - started
            self._events.emit(
                TurnFinished(message.chat, message.id, outcome, iterations, duration, replied=reply is not None)
            )
            logger.info("[%s] turn %s in %.2fs (%s)", key, outcome, duration, message.id)
        await self._hook("agent_end", AgentEnd(key, message.chat, message.sender_id, outcome, reply))
        if reply is not None:
            await self._reply(message, reply, kind, completes=ids, finalises=message.id if message.stream else None)
        else:
            await self._bus.complete_inbound(ids)

    def _steering(self, lane: _Lane, trust: Trust, ids: list[str]) -> Callable[[], list[str]]:
        """Takes the messages queued behind the running turn for it (steer mode); their ids join `ids`.

        Only messages as trusted as the turn join it, so the turn still acts with its messages' lowest trust;
        a less trusted one, or /new, waits for the next turn.
        """

        def take() -> list[str]:
            taken: list[str] = []
            while lane.pending and _may_join(lane.pending[0], trust):
                message = lane.pending.popleft()
                ids.append(message.id)  # answered by this turn's reply, so completed with it
                taken.append(self._context.user_text(message))
            return taken

        return take

    async def _run_turn(
        self,
        batch: list[InboundMessage],
        outbox: TurnOutbox,
        session_key: str | None = None,
        steer: Callable[[], list[str]] | None = None,
    ) -> TurnResult:
        message = replace(batch[-1], trust=lowest_trust(batch))
        session = self._sessions.get(session_key or message.chat.session_key)
        with charged_to(charge_for(message, session.key)):
            if self._transcriber is not None:
                batch = [await self._transcriber.apply(m) for m in batch]
                message = replace(batch[-1], trust=message.trust)
            persona, runner = self._personas.for_message(message) if self._personas else (None, self._runner)
            return await self._run_persona_turn(message, batch, outbox, session, persona, runner, steer)

    async def _run_persona_turn(
        self,
        message: InboundMessage,
        batch: list[InboundMessage],
        outbox: TurnOutbox,
        session: Session,
        persona: Persona | None,
        runner: TurnRunner,
        steer: Callable[[], list[str]] | None,
    ) -> TurnResult:
        self._close_unfinished(session.key, RESTARTED)  # open calls before a turn starts: the process died mid-round
        scope = scope_for(self._workspace, message)
        text = "\n\n".join(self._context.user_text(m) for m in batch)
        history = session.history(self._config.memory_window)
        ids = [m.id for m in batch]
        again = self._sessions.has_inbound(session, ids)
        if again:
            logger.info("[%s] running %s again after a restart", session.key, message.id)
            history = _before_last_user(history, text)
        messages = self._context.build(message, scope, history, text, persona.system_file if persona else None)
        if not session.messages:
            await self._hook("session_start", SessionStart(session.key, message.chat))
        event = BeforeAgentStart(session.key, message.chat, message.sender_id, message.trust.value, text)
        added = await self._hook("before_agent_start", event)
        if isinstance(added, Replace):
            messages[0] = {**messages[0], "content": f"{messages[0]['content']}\n\n{added.value}"}
        if not again:
            self._sessions.append(session, [{"role": "user", "content": text}], inbound_ids=ids)
        ctx = ToolContext(message.chat, message.sender_id, message.trust, message.id, outbox.send, message.is_direct)

        def record_usage(usage: Usage) -> None:
            self._sessions.record_usage(session, usage.prompt_tokens, usage.completion_tokens)

        stream = None
        if message.stream and (persona is None or persona.streaming is not False):
            # Once the turn has written to its chat, its final text may repeat that and be dropped: hold it back.
            stream = StreamEmitter(
                self._events,
                message.chat,
                message.id,
                message.platform_message_id,
                lambda: outbox.spoke,
                message.sender_id,
            )
        result = await runner.run(
            messages,
            ctx,
            record=lambda new: self._sessions.append(session, new),
            on_usage=record_usage,
            stream=stream,
            steer=steer,
        )
        if self._memory:
            self._memory.after_turn(session, scope)
        return result

    def _close_unfinished(self, key: str, reason: str) -> None:
        """Answer every call the turn left open with `reason`; finished calls and results stay as they are."""
        session = self._sessions.get(key)
        results = closing_results(session.messages, reason)
        if results:
            self._sessions.append(session, results)

    def _reset(self, message: InboundMessage) -> int:
        """Archive the session (its memory is consolidated in the background); returns how many messages it held."""
        old = self._sessions.reset(message.chat.session_key)
        if self._memory and old.messages:
            self._memory.archive(old, scope_for(self._workspace, message))
        return len(old.messages)

    async def _hook(self, hook: str, event: Any) -> Block | Replace | None:
        return await self._hooks.run(hook, event) if self._hooks.has(hook) else None

    async def _plugin_command(self, message: InboundMessage) -> bool:
        """Answer a plugin's `/name` command at once, without a model call; False when it is none."""
        if not message.text.startswith("/") or not self._hooks.commands:
            return False
        word, _, args = message.text[1:].partition(" ")
        name = word.split("@", 1)[0].lower()
        if name not in self._hooks.commands:
            return False
        event = CommandInvoked(message.chat, message.sender_id, message.trust.value, message.text, args.strip())
        answer = await self._hooks.answer(name, event)
        if answer is not None:
            await self._reply(message, answer)
        return True

    async def _stop_session(self, message: InboundMessage) -> None:
        key = message.chat.session_key
        lane = self._lanes.get(key)
        helpers = self._on_stop(key) if self._on_stop else 0
        if lane is None and not helpers:
            await self._reply(message, "Nothing to stop.", completes=[message.id])
            return
        notes = []
        if lane is not None:
            dropped = len(lane.pending)
            await self._bus.complete_inbound([m.id for m in lane.pending])
            lane.pending.clear()
            if lane.turn is not None:
                lane.stopped = True
                lane.turn.cancel()
            if dropped:
                notes.append(f"dropped {dropped} queued message{'s' if dropped != 1 else ''}")
        if helpers:
            notes.append(f"cancelled {helpers} background task{'s' if helpers != 1 else ''}")
        logger.info("[%s] stopped by /stop", key)
        text = "Stopped" + (f" and {' and '.join(notes)}" if notes else "") + "."
        await self._reply(message, text, completes=[message.id])

    def _status(self, message: InboundMessage) -> str:
        session = self._sessions.get(message.chat.session_key)
        used = session.prompt_tokens + session.completion_tokens
        persona, runner = self._personas.for_message(message) if self._personas else (None, self._runner)
        lines = [
            f"Model: {runner.provider.model}",
            f"Persona: {persona.name if persona else 'default'}",
            f"Your role: {message.trust.value}",
            f"Session: {session.total} messages",
            f"Tokens used in this session: {used:,} ({session.prompt_tokens:,} in, {session.completion_tokens:,} out)",
        ]
        if self._account is not None:
            lines.append(f"Budget left: {self._account.budget_left(message)}")
        if self._budget and self._budget.cramped:
            lines.append(f"Warning: {self._budget.cramped}")
        return "\n".join(lines)

    async def _reply(
        self,
        message: InboundMessage,
        text: str,
        kind: ReplyKind = "reply",
        completes: Sequence[str] = (),
        finalises: str | None = None,
    ) -> None:
        """Publish the reply; the messages it answers are marked handled in the same journal write."""
        decision = await self._hook("message_sending", MessageSending(message.chat, text, message.id))
        if isinstance(decision, Block):
            logger.info("[%s] reply dropped by a plugin: %s", message.chat.session_key, decision.reason)
            await self._bus.complete_inbound(completes)
            return
        if isinstance(decision, Replace):
            text = str(decision.value)
        await self._bus.publish_outbound(
            OutboundMessage(
                chat=message.chat,
                text=text,
                in_reply_to=message.id,
                reply_to_platform_id=message.platform_message_id,
                kind=kind,
                id=f"{message.id}:reply",
                finalises=finalises,
            ),
            completes,
        )
        await self._hook("message_sent", MessageSent(message.chat, text, message.id))


def _already_said(result: TurnResult, outbox: TurnOutbox) -> bool:
    """The dedupe rule: after `message` wrote to this chat, a final reply that is empty or repeats it is dropped."""
    return outbox.spoke and (result.text == EMPTY_REPLY or outbox.repeats(result.text))


def _may_join(message: InboundMessage, trust: Trust) -> bool:
    """Whether a queued message may be steered into a running turn of this trust."""
    more_trusted = TRUST_ORDER.index(message.trust) >= TRUST_ORDER.index(trust)
    return message.kind == "user" and not _is_new_session(message) and more_trusted


def _before_last_user(history: list[dict], text: str) -> list[dict]:
    """History up to the user message being run again, which the new prompt repeats."""
    for index in range(len(history) - 1, -1, -1):
        if history[index].get("role") == "user" and history[index].get("content") == text:
            return history[:index]
    return history


def _is_new_session(message: InboundMessage) -> bool:
    """Whether a message is /new, which never merges with others."""
    return message.kind == "user" and parse_command(message.text) is Command.NEW

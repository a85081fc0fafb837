"""The agent loop: lanes keep one turn per session, a semaphore caps turns across sessions."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Literal

from bot.agent.commands.session_switch import SessionSwitch
from bot.agent.context.room import turn_trust
from bot.agent.edits import EditDesk
from bot.agent.lanes import Lane, next_batch, steering
from bot.agent.loop_parts import LoopParts, instant_commands
from bot.agent.owner_dm import LastOwnerDM, OwnerDM
from bot.agent.session_turn import SessionTurns
from bot.agent.turn.interruption import (
    CRASHED,
    MODEL_FAILED,
    SHUT_DOWN,
    STOPPED,
    bounded,
    dead_letter_reason,
    provider_outcome,
    timed_out,
    timeout_reply,
)
from bot.agent.turn.outbox import TurnOutbox
from bot.agent.turn.runner import EMPTY_REPLY, TurnResult
from bot.agent.turn.stream import is_silent
from bot.agent.turn_hooks import TurnHooks, TurnMark
from bot.bus import ChatRef, Choice, InboundMessage, MessageBus, OutboundMessage
from bot.bus.dead_letters import apology_for
from bot.chats.rules import ChatRules, ChatRulesBook
from bot.commands.parse import parse_command
from bot.config.schema import AgentConfig
from bot.errors import ProviderError, TurnTimedOut
from bot.events import ErrorOccurred, EventBus, TurnFinished, TurnStarted
from bot.hooks.handlers import Hooks
from bot.hooks.hook_events import Block
from bot.scheduler.heartbeat_ack import strip_ack

logger = logging.getLogger(__name__)

ReplyKind = Literal["reply", "error"]
CRASH_REPLY = "Sorry, something went wrong on my side while answering. Please try again."


class AgentLoop:
    """Answers each message a roster hands it (`accept`) on the outbound bus, one lane per session."""

    def __init__(
        self,
        bus: MessageBus,
        events: EventBus,
        config: AgentConfig,
        workspace: Path,
        parts: LoopParts,
        hooks: Hooks | None = None,
    ) -> None:
        self._bus = bus
        self._sessions = parts.sessions
        self._context = parts.context
        self._events = events
        self._config = config
        self._on_stop = parts.on_stop
        self._voice = parts.voice
        self._owner_dm: OwnerDM = parts.owner_dm or LastOwnerDM()
        self._hooks = TurnHooks(hooks or Hooks(), events)
        self._hooks.hooks.prompts.notify_with(bus.publish_outbound)
        self._switch = SessionSwitch(parts.sessions, self._hooks, workspace, parts.memory, parts.timezone)
        self._commands = instant_commands(parts, self._hooks, self._switch, bus.publish_outbound, self._stop_session)
        self._lane_commands = self._switch.router()
        self._turns = SessionTurns(
            parts.runner,
            parts.sessions,
            parts.context,
            events,
            self._hooks,
            workspace,
            config.memory_window,
            parts.memory,
            parts.personas,
            parts.transcriber,
            parts.recall,
        )
        self._rules = parts.rules or ChatRulesBook({}, config.queue_mode)
        self._edits = EditDesk(parts.sessions, parts.context.user_text, bus.complete_inbound, parts.edits_remembered)
        self._slots = asyncio.Semaphore(config.max_concurrent_turns)
        self._lanes: dict[str, Lane] = {}

    async def drain(self, grace: float) -> None:
        """Drop queued messages (they stay pending in the bus) and give running turns up to `grace` seconds."""
        for lane in self._lanes.values():
            lane.pending.clear()
        turns = [lane.turn for lane in self._lanes.values() if lane.turn]
        if turns:
            logger.warning("waiting up to %.0fs for %d running turns", grace, len(turns))
            await asyncio.wait(turns, timeout=grace)

    async def stop(self) -> None:
        """Cancel running turns (they stay pending in the bus) and wait for them to end."""
        tasks: list[asyncio.Task[None]] = []
        for lane in self._lanes.values():
            lane.pending.clear()
            if lane.worker is not None:  # a running turn runs in its lane's worker
                tasks.append(lane.worker)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    @property
    def last_owner_chat(self) -> ChatRef | None:
        """The direct chat in which an owner wrote most recently (never a group)."""
        return self._owner_dm.chat

    def is_busy(self, session_key: str) -> bool:
        """Whether the session has a turn running or queued."""
        return session_key in self._lanes

    async def accept(self, message: InboundMessage) -> None:
        """Route one message: immediate commands now, everything else into its session's lane."""
        key = message.chat.session_key
        if message.edit_of and message.kind == "user":
            follow = await self._edits.take(message, self._lanes.get(key), self._rules_of(message).on_edit)
            if follow is not None:
                self._enqueue(follow)
            return
        self._owner_dm.note(message)
        command = parse_command(message.text) if message.kind == "user" else None
        if command is not None and command.heard:
            await self._hooks.issued(message)
        if command is not None and command.urgent and await self._answered(message):
            return
        if await self._hooks.hooks.prompts.take(message):  # a press or an answer a waiting turn needs now
            await self._bus.complete_inbound([message.id])
            return
        if await self._answered(message):
            return
        received = await self._hooks.received(message)
        if isinstance(received, Block):
            await self._reply(message, received.reason, completes=[message.id])
            return
        self._enqueue(received)

    async def _answered(self, message: InboundMessage) -> bool:
        """Whether the message was a command the loop answers at once, now answered."""
        answer = await self._commands.answer(message)
        if answer is None:
            return False
        if answer.text is None:
            await self._bus.complete_inbound([message.id])
        else:
            buttons = (answer.choices, answer.prompt_id)
            await self._reply(message, answer.text, completes=[message.id], buttons=buttons)
        return True

    def _enqueue(self, message: InboundMessage) -> None:
        key = message.chat.session_key
        lane = self._lanes.setdefault(key, Lane())
        lane.pending.append(message)
        if lane.worker is None:
            lane.worker = asyncio.create_task(self._drain(key, lane), name=f"lane:{key}")

    def _rules_of(self, message: InboundMessage) -> ChatRules:
        return self._rules.for_chat(message.chat, message.server_id, message.is_direct)

    async def _drain(self, key: str, lane: Lane) -> None:
        """Run the session's queued turns one after another, each in this task: /stop cancels it while a turn runs
        (`lane.turn`), and the lane goes on with its next messages; any other cancellation ends the lane."""
        worker = asyncio.current_task()
        assert worker is not None
        try:
            while lane.pending:
                async with self._slots:
                    mode = self._rules_of(lane.pending[0]).queue_mode if lane.pending else "followup"
                    batch = next_batch(lane.pending, mode)
                    if not batch:
                        continue
                    lane.stopped = False
                    lane.running = self._edits.taken(batch)
                    lane.turn = worker
                    try:
                        await self._process(batch, lane)
                    except asyncio.CancelledError:
                        if not lane.stopped or worker.uncancel() > 0:
                            raise
                    finally:
                        lane.turn, lane.running = None, frozenset()
                await self._late_edits(lane)
        finally:
            self._lanes.pop(key, None)

    async def _process(self, batch: list[InboundMessage], lane: Lane) -> None:
        message = batch[-1]
        key = message.chat.session_key
        ids = [m.id for m in batch]
        routed = self._lane_commands.route(message)  # /new, /reset, /resume N: the live session changes between turns
        if routed is not None:
            found, switch = routed
            await self._reply(message, await switch(message, found), completes=ids)
            return
        await self._bus.begin_inbound(ids)
        session = await self._sessions.load(key)
        mark = TurnMark.of(session)  # agent_end reports what the turn added to the session
        started = time.perf_counter()
        self._events.emit(TurnStarted(message.chat, message.id, tuple(ids), "\n\n".join(m.text for m in batch)))
        outbox = TurnOutbox(message.chat, self._bus.publish_outbound)
        outcome = "answered"
        iterations = 0
        reply: str | None = None
        kind: ReplyKind = "reply"
        failure: str | None = None  # why the turn failed for good: its messages become dead letters
        heartbeat = any(m.origin == "heartbeat" for m in batch)
        try:
            rules = self._rules_of(message)
            trust = turn_trust(batch, rules.group_history_trust == "lowest")
            running = lane.running
            steer = steering(
                lane,
                trust,
                ids,
                self._context.user_text,
                rules.queue_mode == "steer",
                lambda edit: self._edits.steering_text(edit, running),
            )
            result = await bounded(self._turns.run(batch, session, outbox, steer, trust), self._config.turn_timeout)
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
            self._turns.close_unfinished(key, STOPPED if lane.stopped else SHUT_DOWN)
            # Stopped by the user: handled. Stopped by a shutdown: the next start runs it again.
            await (self._bus.complete_inbound(ids) if lane.stopped else self._bus.release_inbound(ids))
            await self._hooks.ended(message, "stopped" if lane.stopped else "shut down", None, mark, self._sessions)
            raise
        except TurnTimedOut as exc:
            outcome = "timed out"
            logger.warning("[%s] turn cancelled: %s", key, exc)
            self._turns.close_unfinished(key, timed_out(exc.seconds))
            reply, kind = timeout_reply(exc.seconds), "error"
        except ProviderError as exc:
            outcome = provider_outcome(exc)
            self._turns.close_unfinished(key, MODEL_FAILED)
            reply, kind, failure = exc.user_message, "error", dead_letter_reason(exc)
            self._events.emit(ErrorOccurred(message.chat, "llm", type(exc).__name__))
        except Exception as exc:
            outcome = "crashed"
            logger.exception("[%s] turn crashed", key)
            self._turns.close_unfinished(key, CRASHED)
            reply, kind, failure = CRASH_REPLY, "error", dead_letter_reason(exc)
            self._events.emit(ErrorOccurred(message.chat, "turn", type(exc).__name__))
        finally:
            if heartbeat and kind == "error":
                reply = None  # nobody asked: a failed heartbeat is logged, never sent
            duration = time.perf_counter() - started
            self._events.emit(
                TurnFinished(message.chat, message.id, outcome, iterations, duration, reply is not None, reply or "")
            )
            logger.info("[%s] turn %s in %.2fs (%s)", key, outcome, duration, message.id)
        await self._hooks.ended(message, outcome, reply, mark, self._sessions)
        if failure is not None and all(m.awaited for m in batch):
            logger.info("[%s] turn failed for good; its caller gets the error, no dead letter is kept", key)
            failure = None
        if failure is not None and not heartbeat:
            await self._fail(batch, failure, reply)
        elif reply is not None:
            await self._reply(message, reply, kind, completes=ids, finalises=message.id if message.stream else None)
            if self._voice is not None and kind == "reply":
                await self._voice.reply(batch, reply)
        else:
            await self._bus.complete_inbound(ids)

    async def _fail(self, batch: list[InboundMessage], reason: str, apology: str | None) -> None:
        """The turn failed for good: its messages wait as dead letters (a retry runs them again) and the sender gets
        the apology once, under its own id, so the answer of a retry is not mistaken for one already sent."""
        message = batch[-1]
        sending = await self._hooks.sending(message, apology) if apology is not None else None
        logger.info(
            "[%s] turn failed for good; %d message(s) kept as dead letters", message.chat.session_key, len(batch)
        )
        said = None
        if sending is not None:  # it completes the turn's live message in place, as an answer would
            said = replace(apology_for(message, sending), finalises=message.id if message.stream else None)
        await self._bus.fail_inbound(batch, reason, said)
        if sending is not None:
            await self._hooks.sent(message, sending)

    async def _late_edits(self, lane: Lane) -> None:
        """Edits that came after the turn's last model call: handled as edits of an answered message."""
        while lane.edits:
            edit = lane.edits.pop(0)
            follow = await self._edits.answered(edit, lane, self._rules_of(edit).on_edit)
            if follow is not None:
                lane.pending.append(follow)

    async def _stop_session(self, message: InboundMessage) -> str:
        """/stop: the chat's running turn and sub-agents cancelled, its queue dropped; the reply to send."""
        key = message.chat.session_key
        lane = self._lanes.get(key)
        helpers = self._on_stop(key) if self._on_stop else 0
        if lane is None and not helpers:
            return "Nothing to stop."
        notes = []
        if lane is not None:
            dropped_ids = lane.stop()
            await self._bus.complete_inbound(dropped_ids)
            if dropped := len(dropped_ids):
                notes.append(f"dropped {dropped} queued message{'s' if dropped != 1 else ''}")
        if helpers:
            notes.append(f"cancelled {helpers} background task{'s' if helpers != 1 else ''}")
        logger.info("[%s] stopped by /stop", key)
        return "Stopped" + (f" and {' and '.join(notes)}" if notes else "") + "."

    async def _reply(
        self,
        message: InboundMessage,
        text: str,
        kind: ReplyKind = "reply",
        completes: Sequence[str] = (),
        finalises: str | None = None,
        buttons: tuple[tuple[Choice, ...], str | None] = ((), None),
    ) -> None:
        """Publish the reply, with any buttons; the messages it answers are marked handled in the same journal write."""
        sending = await self._hooks.sending(message, text)
        if sending is None:
            await self._bus.complete_inbound(completes)
            return
        await self._bus.publish_outbound(
            OutboundMessage(
                chat=message.chat,
                text=sending,
                in_reply_to=message.id,
                reply_to_platform_id=message.edit_of or message.platform_message_id,
                kind=kind,
                id=f"{message.id}:reply",
                finalises=finalises,
                revises_reply_to=message.edit_of,  # an answer run again after an edit replaces the first one
                choices=buttons[0],
                prompt_id=buttons[1],
            ),
            completes,
        )
        await self._hooks.sent(message, sending)


def _already_said(result: TurnResult, outbox: TurnOutbox) -> bool:
    """The dedupe rule: after `message` wrote to this chat, a final reply that is empty or repeats it is dropped."""
    return outbox.spoke and (result.text == EMPTY_REPLY or outbox.repeats(result.text))

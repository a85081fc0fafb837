"""One turn in its session: the batch's text logged and built into context, then run with its persona's runner."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from bot.agent.consolidation import MemoryConsolidator
from bot.agent.context.auto_recall import AutoRecall, with_recalled
from bot.agent.context.builder import ContextBuilder
from bot.agent.persona.routes import Persona
from bot.agent.persona.runners import PersonaTurns
from bot.agent.turn.interruption import RESTARTED, closing_results
from bot.agent.turn.outbox import TurnOutbox
from bot.agent.turn.runner import TurnResult, TurnRunner
from bot.agent.turn.stream import StreamEmitter
from bot.agent.turn_hooks import TurnHooks
from bot.bus import InboundMessage, Trust, lowest_trust
from bot.events import EventBus
from bot.llm.transcription import Transcriber, note_voice
from bot.llm.types import Usage
from bot.memory.files import scope_for
from bot.sessions.session import Session, Sessions
from bot.tools.base import ToolContext
from bot.usage.charge import charge_for, charged_to

logger = logging.getLogger(__name__)


class SessionTurns:
    """Runs a batch of messages as one turn of their session; the session log stays whole whatever happens."""

    def __init__(
        self,
        runner: TurnRunner,
        sessions: Sessions,
        context: ContextBuilder,
        events: EventBus,
        hooks: TurnHooks,
        workspace: Path,
        memory_window: int,
        memory: MemoryConsolidator | None = None,
        personas: PersonaTurns | None = None,
        transcriber: Transcriber | None = None,
        recall: AutoRecall | None = None,
    ) -> None:
        self._runner = runner
        self._sessions = sessions
        self._context = context
        self._events = events
        self._hooks = hooks
        self._workspace = workspace
        self._memory_window = memory_window
        self._memory = memory
        self._personas = personas
        self._transcriber = transcriber
        self._recall = recall

    async def run(
        self,
        batch: list[InboundMessage],
        session: Session,
        outbox: TurnOutbox,
        steer: Callable[[], list[str]] | None = None,
        trust: Trust | None = None,
    ) -> TurnResult:
        """Run the turn in `session` (the batch's, as its caller just loaded it), acting with `trust` (by default the
        batch's lowest) and charged to its sender."""
        trust = trust or lowest_trust(batch)
        with charged_to(charge_for(_trusted(batch[-1], trust))):
            if self._transcriber is not None:
                batch = [await self._transcriber.apply(m) for m in batch]
            else:
                batch = [note_voice(m) for m in batch]
            message = _trusted(batch[-1], trust)
            persona, runner = self._personas.for_message(message) if self._personas else (None, self._runner)
            return await self._run_persona_turn(message, batch, outbox, session, persona, runner, steer)

    def close_unfinished(self, key: str, reason: str, session: Session | None = None) -> None:
        """Answer every call the turn left open with `reason`; finished calls and results stay as they are."""
        session = session or self._sessions.get(key)
        results = closing_results(session.messages, reason)
        if results:
            self._sessions.append(session, results)

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
        # open calls before a turn starts: the process died mid-round (the session was just loaded: no second read)
        self.close_unfinished(session.key, RESTARTED, session)
        scope = scope_for(self._workspace, message)
        text = "\n\n".join(self._context.user_text(m) for m in batch)
        history = _client_history(message) or session.history(self._memory_window)
        ids = [m.id for m in batch]
        again = self._sessions.has_inbound(session, ids)
        if again:
            logger.info("[%s] running %s again after a restart", session.key, message.id)
            history = _before_last_user(history, text)
        shown_from = session.total - len(history)
        bootstrap = await self._hooks.bootstrap(message, self._context.bootstrap_files(scope))
        persona_file = persona.system_file if persona else None
        messages = self._context.build(message, scope, history, text, persona_file, bootstrap)
        recalling = self._recall is not None and self._recall.wanted(message, persona)
        if self._recall is not None and recalling:
            asked = "\n".join(m.text for m in batch)
            window = self._memory_window
            if block := await self._recall.block(scope.directory, message.chat, asked, shown_from, window):
                messages[-1] = with_recalled(messages[-1], block)
        messages = await self._hooks.starting(message, text, messages, first=not session.messages)
        if not again:
            self._sessions.append(session, [{"role": "user", "content": text}], inbound_ids=ids)
        ctx = ToolContext(
            message.chat,
            message.sender_id,
            message.trust,
            message.id,
            outbox.send,
            message.is_direct,
            persona.name if persona else None,
            person=message.person,
            memory_dir=scope.directory,
            shown_from=shown_from,
        )

        # A call's usage is written with the message it produced (the runner records one right after), in one write.
        unwritten: list[tuple[int, int]] = []

        def record_usage(usage: Usage) -> None:
            unwritten.append((usage.prompt_tokens, usage.completion_tokens))

        def record(new: list[dict[str, Any]]) -> None:
            self._sessions.append(session, new, usage=unwritten.pop() if unwritten else None)

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
        try:
            result = await runner.run(messages, ctx, record, on_usage=record_usage, stream=stream, steer=steer)
        finally:
            for prompt_tokens, completion_tokens in unwritten:  # a call whose message was never recorded
                self._sessions.record_usage(session, prompt_tokens, completion_tokens)
            if self._recall is not None and not recalling:  # else a later search indexes what this one saved, at
                self._recall.saved(scope.directory, session.key)  # the latest once it has left the prompt
        if self._memory:
            self._memory.after_turn(session, scope, message.chat)
        return result


def _trusted(message: InboundMessage, trust: Trust) -> InboundMessage:
    """The message acting with `trust` (itself when it already does)."""
    return message if message.trust is trust else replace(message, trust=trust)


def _client_history(message: InboundMessage) -> list[dict[str, Any]]:
    """A stateless call's own conversation, its system messages first (they follow the system prompt)."""
    said = [earlier.as_message() for earlier in message.conversation]
    return [m for m in said if m["role"] == "system"] + [m for m in said if m["role"] != "system"]


def _before_last_user(history: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    """History up to the user message being run again, which the new prompt repeats."""
    for index in range(len(history) - 1, -1, -1):
        if history[index].get("role") == "user" and history[index].get("content") == text:
            return history[:index]
    return history

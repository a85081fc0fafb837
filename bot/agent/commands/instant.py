"""Commands answered at once, whatever the queue mode: never queued behind a turn or merged into one."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.agent.commands.account import AccountCommands
from bot.agent.commands.approval import approval_answer
from bot.agent.commands.help import GREETING, UNKNOWN_COMMAND, help_text, not_usable
from bot.agent.commands.model import PROMPT_ID, ModelCommand
from bot.agent.commands.session_switch import SessionSwitch
from bot.agent.context.budget import ContextBudget
from bot.agent.persona.runners import PersonaTurns
from bot.agent.turn.runner import TurnRunner
from bot.agent.turn_hooks import TurnHooks
from bot.bus import Choice, InboundMessage
from bot.commands.catalogue import (
    APPROVE,
    DENY,
    HELP,
    MODEL,
    PAIR,
    SESSIONS,
    START,
    STATUS,
    STOP,
    USAGE,
    place_of,
)
from bot.commands.parse import Invocation, invocation
from bot.commands.router import CommandRouter, Handler
from bot.plugins.approvals import ExecApprovals
from bot.sessions.session import Sessions


@dataclass(frozen=True, slots=True)
class Answer:
    """A command's reply; None when it asks for none (the command is handled all the same)."""

    text: str | None
    choices: tuple[Choice, ...] = ()  # buttons under the reply; a press comes back with `prompt_id`
    prompt_id: str | None = None


class InstantCommands:
    """Answers /stop, /help, /start, /status, /usage, /pair, /model, /sessions, /approve, /deny, plugin and unknown
    ones."""

    def __init__(
        self,
        sessions: Sessions,
        runner: TurnRunner,
        hooks: TurnHooks,
        personas: PersonaTurns | None = None,
        account: AccountCommands | None = None,
        budget: ContextBudget | None = None,
        model: ModelCommand | None = None,
        switch: SessionSwitch | None = None,
        approvals: ExecApprovals | None = None,
        stop: Callable[[InboundMessage], Awaitable[str]] | None = None,
    ) -> None:
        self._sessions = sessions
        self._runner = runner
        self._hooks = hooks
        self._personas = personas
        self._account = account
        self._budget = budget
        self._model = model
        self._switch = switch
        self._approvals = approvals
        self._stop = stop
        self._routes = self._router()

    def _router(self) -> CommandRouter[Handler[Answer]]:
        """Each command the loop answers at once, with its handler; the plugins' commands beside them."""
        router: CommandRouter[Handler[Answer]] = CommandRouter("loop")
        if self._stop is not None:
            router.add(STOP, self._stopped)
        router.add(HELP, self._help)
        router.add(START, self._greet)
        router.add(STATUS, self._status)
        if self._switch is not None:
            router.add(SESSIONS, self._sessions_listed)
        if self._model is not None:
            router.add(MODEL, self._model_answer)
        if self._account is not None:
            router.add(USAGE, self._usage)
            router.add(PAIR, self._pair)
        if self._approvals is not None:
            router.add(APPROVE, self._approve)
            router.add(DENY, self._deny)
        router.add_plugins(self._hooks.hooks.commands, self._plugin)
        return router

    async def answer(self, message: InboundMessage) -> Answer | None:
        """The answer to a user's command, or None when the message is no such command or one its lane answers (/new,
        /resume)."""
        found = invocation(message.text) if message.kind == "user" else None
        if found is None:
            return None
        command, place = found.built_in, place_of(message)
        if command is not None and not command.usable(place, message.trust):
            return Answer(not_usable(command, place))
        routed = self._routes.route_invocation(found)
        if routed is not None:
            return await routed[1](message, found)
        return None if command is not None and command.answered == "lane" else Answer(UNKNOWN_COMMAND)

    async def _stopped(self, message: InboundMessage, found: Invocation) -> Answer:
        assert self._stop is not None
        return Answer(await self._stop(message))

    async def _help(self, message: InboundMessage, found: Invocation) -> Answer:
        return Answer(help_text(place_of(message), message.trust))

    async def _greet(self, message: InboundMessage, found: Invocation) -> Answer:
        return Answer(GREETING)

    async def _status(self, message: InboundMessage, found: Invocation) -> Answer:
        await self._sessions.load(message.chat.session_key)  # a session not cached is read off the event loop
        return Answer(self.status(message))

    async def _sessions_listed(self, message: InboundMessage, found: Invocation) -> Answer:
        assert self._switch is not None
        return Answer(await self._switch.listing(message))

    async def _model_answer(self, message: InboundMessage, found: Invocation) -> Answer:
        assert self._model is not None
        text, choices = self._model.answer(message)
        return Answer(text, choices, PROMPT_ID if choices else None)

    async def _usage(self, message: InboundMessage, found: Invocation) -> Answer:
        assert self._account is not None
        return Answer(self._account.usage(message))

    async def _pair(self, message: InboundMessage, found: Invocation) -> Answer:
        assert self._account is not None
        return Answer(self._account.pair(message))

    async def _approve(self, message: InboundMessage, found: Invocation) -> Answer:
        assert self._approvals is not None
        return Answer(approval_answer(self._approvals, message, found.args, deny=False))

    async def _deny(self, message: InboundMessage, found: Invocation) -> Answer:
        assert self._approvals is not None
        return Answer(approval_answer(self._approvals, message, found.args, deny=True))

    async def _plugin(self, message: InboundMessage, found: Invocation) -> Answer:
        invoked = self._hooks.command(message)
        assert invoked is not None
        return Answer(await self._hooks.hooks.answer(*invoked))

    def status(self, message: InboundMessage) -> str:
        """/status: the model, persona, role, session length, tokens used and budget left."""
        session = self._sessions.get(message.chat.session_key)
        used = session.prompt_tokens + session.completion_tokens
        persona, runner = self._personas.for_message(message) if self._personas else (None, self._runner)
        lines = [
            f"Model: {self._model.current(message) if self._model else runner.provider.model}",
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

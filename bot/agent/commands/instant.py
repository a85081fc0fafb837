"""Commands answered at once, whatever the queue mode: never queued behind a turn or merged into one."""

from __future__ import annotations

from dataclasses import dataclass

from bot.agent.commands.account import AccountCommands
from bot.agent.commands.approval import approval_answer
from bot.agent.commands.help import GREETING, UNKNOWN_COMMAND, help_text, not_usable
from bot.agent.commands.model import PROMPT_ID, ModelCommand
from bot.agent.commands.session_switch import SessionSwitch
from bot.agent.context_budget import ContextBudget
from bot.agent.persona_turns import PersonaTurns
from bot.agent.turn import TurnRunner
from bot.agent.turn_hooks import TurnHooks
from bot.bus import Choice, InboundMessage
from bot.commands.catalogue import (
    APPROVE,
    DENY,
    HELP,
    MODEL,
    NEW,
    PAIR,
    RESUME,
    SESSIONS,
    START,
    STATUS,
    USAGE,
    place_of,
)
from bot.commands.parse import invocation
from bot.plugins.approvals import ExecApprovals
from bot.sessions.session import Sessions


@dataclass(frozen=True, slots=True)
class Answer:
    """A command's reply; None when it asks for none (the command is handled all the same)."""

    text: str | None
    choices: tuple[Choice, ...] = ()  # buttons under the reply; a press comes back with `prompt_id`
    prompt_id: str | None = None


class InstantCommands:
    """Answers /help, /start, /status, /usage, /pair, /model, /sessions, /approve, /deny, plugin and unknown ones."""

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

    async def answer(self, message: InboundMessage) -> Answer | None:
        """The answer to a user's command (not /stop or /new), or None when the message is no such command."""
        found = invocation(message.text) if message.kind == "user" else None
        if found is None:
            return None
        command, place = found.built_in, place_of(message)
        if command is not None and not command.usable(place, message.trust):
            return Answer(not_usable(command, place))
        if command is HELP:
            return Answer(help_text(place, message.trust))
        if command is START:
            return Answer(GREETING)
        if command is STATUS:
            await self._sessions.load(message.chat.session_key)  # a session not cached is read off the event loop
            return Answer(self.status(message))
        if command is SESSIONS and self._switch is not None:
            return Answer(await self._switch.listing(message))
        if command is MODEL and self._model is not None:
            text, choices = self._model.answer(message)
            return Answer(text, choices, PROMPT_ID if choices else None)
        if command is USAGE and self._account is not None:
            return Answer(self._account.usage(message))
        if command is PAIR and self._account is not None:
            return Answer(self._account.pair(message))
        if command in (APPROVE, DENY) and self._approvals is not None:
            return Answer(approval_answer(self._approvals, message, found.args, deny=command is DENY))
        invoked = self._hooks.command(message)
        if invoked is not None:
            return Answer(await self._hooks.hooks.answer(*invoked))
        return None if command in (NEW, RESUME) else Answer(UNKNOWN_COMMAND)  # these switch the session in the lane

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

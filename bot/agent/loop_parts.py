"""What the composition root hands the agent loop: its collaborators, and the instant commands made of them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.agent.commands.account import AccountCommands
from bot.agent.commands.instant import InstantCommands
from bot.agent.commands.model import ModelCommand
from bot.agent.commands.session_switch import SessionSwitch
from bot.agent.consolidation import MemoryConsolidator
from bot.agent.context.auto_recall import AutoRecall
from bot.agent.context.budget import ContextBudget
from bot.agent.context.builder import ContextBuilder
from bot.agent.edits import REMEMBERED
from bot.agent.owner_dm import OwnerDM
from bot.agent.persona.chat_models import ChatModels
from bot.agent.persona.runners import PersonaTurns
from bot.agent.turn.runner import TurnRunner
from bot.agent.turn_hooks import TurnHooks
from bot.agent.voice_reply import VoiceReplies
from bot.bus import InboundMessage, OutboundMessage
from bot.chats.rules import ChatRulesBook
from bot.llm.transcription import Transcriber
from bot.plugins.approvals import ExecApprovals
from bot.sessions.session import Sessions


@dataclass(frozen=True, slots=True)
class LoopParts:
    """The collaborators a loop's turns and instant commands use, built by the composition root."""

    runner: TurnRunner
    sessions: Sessions
    context: ContextBuilder
    memory: MemoryConsolidator | None = None
    personas: PersonaTurns | None = None
    account: AccountCommands | None = None
    budget: ContextBudget | None = None
    transcriber: Transcriber | None = None
    owner_dm: OwnerDM | None = None
    on_stop: Callable[[str], int] | None = None  # cancels a session's background helpers; returns how many
    rules: ChatRulesBook | None = None  # per-chat queue mode, edits and group context trust
    models: ChatModels | None = None  # `llm.models` and each chat's choice, for /model
    timezone: str = "UTC"  # the dates /sessions shows
    recall: AutoRecall | None = None  # recalls earlier passages into each turn's prompt (and keeps the index)
    voice: VoiceReplies | None = None  # speaks replies (`voice.reply`) when a TTS model is set
    approvals: ExecApprovals | None = None  # the commands waiting for /approve or /deny
    edits_remembered: int = REMEMBERED  # messages of recent turns an edit may still reach


def instant_commands(
    parts: LoopParts,
    hooks: TurnHooks,
    switch: SessionSwitch,
    publish: Callable[[OutboundMessage], Awaitable[object]],
    stop: Callable[[InboundMessage], Awaitable[str]],
) -> InstantCommands:
    """The commands answered at once, /model's picker registered for its presses when the chat settings are at hand."""
    model: ModelCommand | None = None
    if parts.models is not None:
        personas = parts.personas

        def configured(message: InboundMessage) -> str:
            return (personas.configured(message)[1] if personas else parts.runner).provider.model

        model = ModelCommand(parts.models, configured, publish)
        hooks.hooks.prompts.on(model.pressed)
    return InstantCommands(
        parts.sessions,
        parts.runner,
        hooks,
        parts.personas,
        parts.account,
        parts.budget,
        model,
        switch,
        parts.approvals,
        stop,
    )

"""The turn runner of each persona and chosen model, built on first use; messages without either use the default."""

from __future__ import annotations

from collections.abc import Callable

from bot.agent.persona.chat_models import ChatModels
from bot.agent.persona.routes import Persona, PersonaRouter
from bot.agent.turn.runner import TurnRunner
from bot.bus import InboundMessage
from bot.config.schema import ModelChoiceConfig

ModelRunner = Callable[[Persona | None, ModelChoiceConfig], TurnRunner]
"""Builds a runner for a persona (None: the default one) speaking with a chat's chosen model."""


class PersonaTurns:
    """Resolves a message's persona and hands out the runner that speaks with its model (or the chat's) and tools."""

    def __init__(
        self,
        router: PersonaRouter,
        default: TurnRunner,
        build: Callable[[Persona], TurnRunner],
        models: ChatModels | None = None,
        build_chosen: ModelRunner | None = None,
    ) -> None:
        self._router = router
        self._default = default
        self._build = build
        self._models = models
        self._build_chosen = build_chosen
        self._runners: dict[str, TurnRunner] = {}
        self._chosen: dict[tuple[str, str], TurnRunner] = {}

    def reconfigure(self, router: PersonaRouter) -> None:
        """Route by `router` and build persona runners afresh from the next message on (a config reload)."""
        self._router = router
        self._runners = {}

    def for_message(self, message: InboundMessage) -> tuple[Persona | None, TurnRunner]:
        """The message's persona (None for the default) and its runner, with the chat's chosen model if any."""
        persona, runner = self.configured(message)
        choice = self._models.chosen(message.chat.session_key) if self._models else None
        if choice is None or self._build_chosen is None:
            return persona, runner
        key = (persona.name if persona else "", choice.alias)
        if key not in self._chosen:
            self._chosen[key] = self._build_chosen(persona, choice)
        return persona, self._chosen[key]

    def configured(self, message: InboundMessage) -> tuple[Persona | None, TurnRunner]:
        """The persona and runner the config picks for the message, whatever model the chat chose."""
        persona = self._router.resolve(message)
        if persona is None:
            return None, self._default
        if persona.name not in self._runners:
            self._runners[persona.name] = self._build(persona)
        return persona, self._runners[persona.name]

"""The turn runner of each persona, built once on first use; messages without a persona use the default."""

from __future__ import annotations

from collections.abc import Callable

from bot.agent.personas import Persona, PersonaRouter
from bot.agent.turn import TurnRunner
from bot.bus import InboundMessage


class PersonaTurns:
    """Resolves a message's persona and hands out the runner that speaks with its model and tools."""

    def __init__(self, router: PersonaRouter, default: TurnRunner, build: Callable[[Persona], TurnRunner]) -> None:
        self._router = router
        self._default = default
        self._build = build
        self._runners: dict[str, TurnRunner] = {}

    def reconfigure(self, router: PersonaRouter) -> None:
        """Route by `router` and build persona runners afresh from the next message on (a config reload)."""
        self._router = router
        self._runners = {}

    def for_message(self, message: InboundMessage) -> tuple[Persona | None, TurnRunner]:
        """The message's persona (None for the default) and its runner."""
        persona = self._router.resolve(message)
        if persona is None:
            return None, self._default
        if persona.name not in self._runners:
            self._runners[persona.name] = self._build(persona)
        return persona, self._runners[persona.name]

"""Personas and the route cascade: chat → server (guild, team) → channel → default; the most specific wins."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import SecretStr

from bot.bus import InboundMessage
from bot.config.schema import LLMConfig, PersonaConfig, ReasoningEffort, RouteConfig
from bot.llm.keys import inherited_key

_SERVER_WORDS = ("guild", "team", "server")


@dataclass(frozen=True, slots=True)
class Persona:
    """A named persona: model settings, a system file added after SOUL.md, a tool subset, streaming, auto-recall."""

    name: str
    model: str | None = None
    api_base: str | None = None
    system_file: Path | None = None
    tools: tuple[str, ...] | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    streaming: bool | None = None
    reasoning_effort: ReasoningEffort | None = None
    api_key: str | None = None
    auto_recall: bool | None = None

    def llm_config(self, base: LLMConfig) -> LLMConfig:
        """`base` with this persona's model and sampling; same provider settings unless it names its api_base (then
        only its own key goes there)."""
        key = inherited_key(self.api_key or "", self.api_base, base.api_key.get_secret_value(), base.api_base)
        changes = {
            "model": self.model,
            "api_base": self.api_base,
            "api_key": SecretStr(key),
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "reasoning_effort": self.reasoning_effort,
        }
        return base.model_copy(update={k: v for k, v in changes.items() if v is not None})


def personas_from(config: Mapping[str, PersonaConfig], workspace: Path) -> dict[str, Persona]:
    """Personas from their config, system files resolved against the workspace."""
    return {
        name: Persona(
            name,
            section.model,
            section.api_base,
            workspace / section.system if section.system else None,
            tuple(section.tools) if section.tools is not None else None,
            section.max_tokens,
            section.temperature,
            section.streaming,
            section.reasoning_effort,
            section.api_key.get_secret_value() if section.api_key is not None else None,
            section.auto_recall,
        )
        for name, section in config.items()
    }


def route_keys(message: InboundMessage) -> list[str]:
    """The route matches a message could hit, most specific first."""
    channel = message.chat.channel
    keys = [f"{channel}:chat:{message.chat.chat_id}"]
    if message.server_id:
        keys.extend(f"{channel}:{word}:{message.server_id}" for word in _SERVER_WORDS)
    keys.extend((channel, "default"))
    return keys


class PersonaRouter:
    """Resolves the persona of a message once, in the core; None means the plain `llm` settings."""

    def __init__(
        self,
        personas: Mapping[str, Persona],
        routes: Sequence[RouteConfig],
        chat_persona: Callable[[InboundMessage], str | None] | None = None,
    ) -> None:
        self._personas = dict(personas)
        self._routes: dict[str, str] = {}
        self._chat_persona = chat_persona
        for route in routes:
            self._routes.setdefault(route.match, route.persona)

    def resolve(self, message: InboundMessage) -> Persona | None:
        """The persona a group's or topic's rule names (`channels.<name>.groups`), else the most specific route's."""
        if self._chat_persona is not None and (name := self._chat_persona(message)) in self._personas:
            return self._personas[name]
        for key in route_keys(message):
            if key in self._routes:
                return self._personas[self._routes[key]]
        return None

    def personas(self) -> list[Persona]:
        """Every configured persona."""
        return list(self._personas.values())

"""The command router of one place: each built-in answered there with its handler, and the plugins' commands.

As aiogram's Router: a command is declared with its handler, once; the catalogue says where it is answered, so a
handler added at another place is refused when it is added, not found missing when a user types it. A handler's shape
is the place's own: most places await `Handler[R]`, the access gate calls its handler at once with the sender's role.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Generic, TypeVar

from bot.bus import InboundMessage
from bot.commands.catalogue import Answered, BuiltIn
from bot.commands.parse import Invocation, invocation

R = TypeVar("R")
Handler = Callable[[InboundMessage, Invocation], Awaitable[R]]
H = TypeVar("H", bound=Callable[..., Any])


class CommandRouter(Generic[H]):
    """The handlers of the commands answered at `where`; `route` finds the one a user's message invokes."""

    def __init__(self, where: Answered) -> None:
        self.where = where
        self._built_ins: dict[BuiltIn, H] = {}
        self._plugins: Mapping[str, object] = {}
        self._plugin_handler: H | None = None

    def add(self, command: BuiltIn, handler: H) -> None:
        """Answer `command` with `handler` here; ValueError when the catalogue says it is answered elsewhere."""
        if command.answered != self.where:
            raise ValueError(f"/{command.name} is answered at the {command.answered}, not at the {self.where}")
        self._built_ins[command] = handler

    def add_plugins(self, commands: Mapping[str, object], handler: H) -> None:
        """Answer every word `commands` holds (the plugins' commands, read live) with `handler`."""
        self._plugins, self._plugin_handler = commands, handler

    def route(self, message: InboundMessage) -> tuple[Invocation, H] | None:
        """The command a user's message invokes and its handler here, or None (not a command, or not answered here)."""
        found = invocation(message.text) if message.kind == "user" else None
        return None if found is None else self.route_invocation(found)

    def route_invocation(self, found: Invocation) -> tuple[Invocation, H] | None:
        """The handler here of an invocation already parsed, or None."""
        command = found.built_in
        if command is not None:
            handler = self._built_ins.get(command)
            return (found, handler) if handler is not None else None
        if self._plugin_handler is not None and found.word in self._plugins:
            return found, self._plugin_handler
        return None

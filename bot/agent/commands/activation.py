"""`/activation mention|always`: a group's own choice between answering mentions and answering everything."""

from __future__ import annotations

from collections.abc import Callable

from bot.access.activation import Activations
from bot.bus import InboundMessage, Trust
from bot.chats.settings import Activation
from bot.commands.catalogue import ACTIVATION
from bot.commands.parse import Invocation
from bot.commands.router import CommandRouter

GateHandler = Callable[[InboundMessage, Invocation, Trust], str]
"""A command answered at the access gate: called at once with the sender's role, it returns the reply."""

USAGE = "Use /activation mention (answer when mentioned) or /activation always (answer every message)."
ONLY_ADMINS = "Only an admin or owner can change when I answer in this group."
ONLY_GROUPS = "/activation is for groups; here I answer every message."
_SAID = {"mention": "I answer here only when mentioned or replied to.", "always": "I answer every message here."}


class ActivationCommand:
    """Answers `/activation` at the access gate, before a group's mention rule, so an unaddressed one counts too."""

    def __init__(self, activations: Activations) -> None:
        self._activations = activations
        self._routes: CommandRouter[GateHandler] = CommandRouter("gate")
        self._routes.add(ACTIVATION, self._activation)

    def answer(self, message: InboundMessage, role: Trust) -> str | None:
        """The reply to a command the gate answers (`/activation …`) from a sender of `role`, or None for others."""
        routed = self._routes.route(message)
        return None if routed is None else routed[1](message, routed[0], role)

    def _activation(self, message: InboundMessage, found: Invocation, role: Trust) -> str:
        if message.is_direct:
            return ONLY_GROUPS
        args = found.args.lower().split()
        if not args:
            current = self._activations.of(message.chat) or "config"
            return f"Activation here: {current}. {USAGE}"
        if len(args) != 1 or args[0] not in _SAID:
            return USAGE
        if not role.at_least(ACTIVATION.role):
            return ONLY_ADMINS
        mode: Activation = "always" if args[0] == "always" else "mention"
        self._activations.choose(message.chat, mode)
        return _SAID[mode]

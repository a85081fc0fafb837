"""Where triggers lead: each target chat on a channel that runs here, and each trigger's turns with its agent."""

from __future__ import annotations

from collections.abc import Iterable

from bot.agents.bindings import Bindings
from bot.config.schema import Config
from bot.errors import ConfigError


def check_targets(config: Config, channel_keys: Iterable[str]) -> None:
    """Raise ConfigError naming the key when a target chat is on no running channel, or when a shared session's
    chat is answered by another agent than the trigger names."""
    running = set(channel_keys)
    bindings = Bindings(config.bindings)
    for index, trigger in enumerate(config.triggers):
        target = trigger.target
        if target.channel_key not in running:
            known = ", ".join(sorted(running)) or "none"
            raise ConfigError(
                f"{trigger.chat!r} is on channel {target.channel_key!r}, which does not run here (channels: {known})",
                f"triggers[{index}].chat",
            )
        bound = bindings.route(target).agent
        if trigger.session == "shared" and trigger.agent is not None and trigger.agent != bound:
            raise ConfigError(
                f"session: shared runs in {trigger.chat}'s session, which agent {bound} answers; name that agent "
                "or use session: own",
                f"triggers[{index}].agent",
            )

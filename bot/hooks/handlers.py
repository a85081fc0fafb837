"""The hook points' handlers and commands: each handler is timed out; one that fails where it guards blocks."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from bot.errors import ConfigError
from bot.hooks.hook_events import HOOK_EVENTS, Block, CommandInvoked, Decision, Replace
from bot.hooks.prompts import Prompts

logger = logging.getLogger(__name__)

HOOK_TIMEOUT = 5.0
"""How long one handler may take before it counts as failed."""

Handler = Callable[[Any], Any]
OnError = Literal["block", "allow"]
_Default = Literal["default"]

ACCEPTED: dict[str, tuple[type[Block] | type[Replace], ...]] = {
    "message_received": (Block, Replace),
    "message_sending": (Block, Replace),
    "before_tool_call": (Block, Replace),
    "before_agent_start": (Replace,),
    "agent_bootstrap": (Replace,),
    "after_tool_call": (Replace,),
    "tool_result_persist": (Replace,),
}
"""The decisions each hook point honours; every other point only observes."""

GUARDS = frozenset(hook for hook, decisions in ACCEPTED.items() if Block in decisions)
"""Hook points that can stop something: a handler that fails there blocks, unless its plugin says `allow`."""


@dataclass(frozen=True, slots=True)
class Registered:
    """One handler at one hook point, with the plugin it came from and what its failure means."""

    handler: Handler
    plugin: str
    timeout: float | None
    on_error: OnError


class _Failed:
    """A handler raised, timed out or returned what its hook point does not take."""

    def __init__(self, why: str) -> None:
        self.why = why


class Hooks:
    """Handlers per hook point and plugin commands; `run` asks each handler in order until one decides."""

    def __init__(self, timeout: float = HOOK_TIMEOUT) -> None:
        self._timeout = timeout
        self._handlers: dict[str, list[Registered]] = {}
        self.commands: dict[str, Callable[[CommandInvoked], Any]] = {}
        self.prompts = Prompts()

    def on(
        self,
        hook: str,
        handler: Handler,
        timeout: float | None | _Default = "default",
        plugin: str | None = None,
        on_error: OnError = "block",
    ) -> None:
        """Add a handler for a hook point; `timeout=None` only for built-ins that bound themselves (approvals)."""
        if hook not in HOOK_EVENTS:
            raise ConfigError(f"unknown hook {hook!r}; hooks are: {', '.join(HOOK_EVENTS)}", "plugins")
        bound = self._timeout if timeout == "default" else timeout
        self._handlers.setdefault(hook, []).append(Registered(handler, plugin or _name(handler), bound, on_error))

    def command(self, name: str, handler: Callable[[CommandInvoked], Any]) -> None:
        """Answer `/name` with the handler's text."""
        self.commands[name.lstrip("/").lower()] = handler

    def has(self, hook: str) -> bool:
        """Whether any handler listens on the hook point (callers skip building events otherwise)."""
        return bool(self._handlers.get(hook))

    async def run(self, hook: str, event: Any) -> Decision | None:
        """The first decision a handler returns that the hook point honours, or None.

        At a guarding hook point a handler that raises, times out or returns anything but None or an
        honoured decision counts as Block (one ERROR line names its plugin) unless its plugin is `allow`;
        elsewhere it is logged and skipped.
        """
        accepted = ACCEPTED.get(hook, ())
        for registered in self._handlers.get(hook, ()):
            outcome = await self._call(hook, registered, event)
            if outcome is None:
                continue
            if isinstance(outcome, accepted):
                return outcome
            why = outcome.why if isinstance(outcome, _Failed) else f"returned {outcome!r}, which {hook} does not take"
            if hook in GUARDS and registered.on_error == "block":
                logger.error("hook %s: plugin %s %s; blocked", hook, registered.plugin, why)
                return Block(f"a check by the plugin {registered.plugin} failed, so this was not done")
            logger.warning("hook %s: plugin %s %s; skipped", hook, registered.plugin, why)
        return None

    async def answer(self, name: str, event: CommandInvoked) -> str | None:
        """A plugin command's reply, or a short apology when its handler fails."""
        handler = self.commands[name]
        reply = await self._call(f"/{name}", Registered(handler, _name(handler), self._timeout, "allow"), event)
        if isinstance(reply, _Failed):
            logger.warning("command /%s: %s %s", name, _name(handler), reply.why)
            return "Sorry, that command failed."
        return None if reply is None else str(reply)

    async def _call(self, hook: str, registered: Registered, event: Any) -> Any:
        try:
            async with asyncio.timeout(registered.timeout):
                result = registered.handler(event)
                if inspect.isawaitable(result):
                    result = await result
                return result
        except TimeoutError:
            return _Failed(f"took over {registered.timeout:g}s")
        except Exception as exc:
            logger.debug("hook %s: %s failed", hook, registered.plugin, exc_info=True)
            return _Failed(f"raised {type(exc).__name__}")


def _name(handler: Handler) -> str:
    return f"{getattr(handler, '__module__', '?')}.{getattr(handler, '__qualname__', repr(handler))}"

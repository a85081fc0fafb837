"""The hook points' handlers and commands: each handler is timed out, and one that fails is logged and skipped."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable
from typing import Any, Literal

from bot.errors import ConfigError
from bot.plugins.events import HOOK_EVENTS, Block, CommandInvoked, Decision, Replace

logger = logging.getLogger(__name__)

HOOK_TIMEOUT = 5.0
"""How long one handler may take before it is skipped."""

Handler = Callable[[Any], Any]
_Default = Literal["default"]


class Hooks:
    """Handlers per hook point and plugin commands; `run` asks each handler in order until one decides."""

    def __init__(self, timeout: float = HOOK_TIMEOUT) -> None:
        self._timeout = timeout
        self._handlers: dict[str, list[tuple[Handler, float | None]]] = {}
        self.commands: dict[str, Callable[[CommandInvoked], Any]] = {}

    def on(self, hook: str, handler: Handler, timeout: float | None | _Default = "default") -> None:
        """Add a handler for a hook point; `timeout=None` only for built-ins that bound themselves (approvals)."""
        if hook not in HOOK_EVENTS:
            raise ConfigError(f"unknown hook {hook!r}; hooks are: {', '.join(HOOK_EVENTS)}", "plugins")
        self._handlers.setdefault(hook, []).append((handler, self._timeout if timeout == "default" else timeout))

    def command(self, name: str, handler: Callable[[CommandInvoked], Any]) -> None:
        """Answer `/name` with the handler's text."""
        self.commands[name.lstrip("/").lower()] = handler

    def has(self, hook: str) -> bool:
        """Whether any handler listens on the hook point (callers skip building events otherwise)."""
        return bool(self._handlers.get(hook))

    async def run(self, hook: str, event: Any) -> Decision | None:
        """The first Block or Replace a handler returns, or None; failing or slow handlers are skipped."""
        for handler, timeout in self._handlers.get(hook, ()):
            decision = await self._call(hook, handler, event, timeout)
            if isinstance(decision, Block | Replace):
                return decision
            if decision is not None and decision is not _FAILED:
                logger.warning("hook %s: %s returned %r, not None, Block or Replace", hook, _name(handler), decision)
        return None

    async def answer(self, name: str, event: CommandInvoked) -> str | None:
        """A plugin command's reply, or a short apology when its handler fails."""
        handler = self.commands[name]
        reply = await self._call(f"/{name}", handler, event, self._timeout)
        return "Sorry, that command failed." if reply is _FAILED else (None if reply is None else str(reply))

    async def _call(self, hook: str, handler: Handler, event: Any, timeout: float | None) -> Any:
        try:
            async with asyncio.timeout(timeout):
                result = handler(event)
                if inspect.isawaitable(result):
                    result = await result
                return result
        except TimeoutError:
            logger.warning("hook %s: %s took over %gs; skipped", hook, _name(handler), timeout)
        except Exception:
            logger.exception("hook %s: %s failed; skipped", hook, _name(handler))
        return _FAILED


_FAILED = object()


def _name(handler: Handler) -> str:
    return f"{getattr(handler, '__module__', '?')}.{getattr(handler, '__qualname__', repr(handler))}"

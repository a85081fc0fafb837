"""Exec approvals, built as a before_tool_call hook: risky commands wait for an owner's /approve or /deny."""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from bot.bus import ChatRef, OutboundMessage
from bot.plugins.events import BeforeToolCall, Block, CommandInvoked
from bot.plugins.hooks import Hooks

logger = logging.getLogger(__name__)

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 3

_PACKAGE_INSTALL = re.compile(
    r"\b(pip3?|uv\s+pip|pipx|npm|pnpm|yarn|apt|apt-get|dnf|yum|apk|brew|gem|cargo|go)\s+"
    r"(install|i|add|get)\b"
)
DANGEROUS_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("recursive delete (rm -r)", re.compile(r"\brm\s+(-\w*[rR]\w*|--recursive)\b")),
    ("a download piped into a shell", re.compile(r"\b(curl|wget)\b[^|]*\|\s*(sudo\s+)?(ba|z|da)?sh\b")),
    ("a package install", _PACKAGE_INSTALL),
    ("sudo", re.compile(r"(^|[;&|]\s*)sudo\b")),
    ("recursive chmod or chown", re.compile(r"\b(chmod|chown)\s+(-\w*R\w*|--recursive)\b")),
)
"""What `approval: dangerous` asks about, besides writes outside the workspace."""

_WRITE_TARGETS = (
    re.compile(r">>?\s*([^\s;&|]+)"),  # redirects
    re.compile(r"\btee\s+(?:-a\s+)?([^\s;&|]+)"),
    re.compile(r"\b(?:cp|mv|install|ln)\s+(?:-\S+\s+)*(?:[^\s;&|]+\s+)+([^\s;&|]+)"),  # the last argument
)


def danger(command: str, workspace: Path) -> str | None:
    """Why a command needs approval under `dangerous`, or None when it does not."""
    for reason, pattern in DANGEROUS_PATTERNS:
        if pattern.search(command):
            return reason
    for pattern in _WRITE_TARGETS:
        for target in pattern.findall(command):
            if _outside(target, workspace):
                return f"a write outside the workspace ({target})"
    return None


def _outside(target: str, workspace: Path) -> bool:
    target = target.strip("'\"")
    if target.startswith("&") or target in ("/dev/null", "/dev/stdout", "/dev/stderr"):
        return False
    if target.startswith("~") or ".." in Path(target).parts:
        return True
    if target.startswith("/"):
        return not Path(target).resolve().is_relative_to(workspace.resolve())
    return False


@dataclass
class _Pending:
    chat: ChatRef
    command: str
    decided: asyncio.Future[bool]


class ExecApprovals:
    """Asks the owner in the turn's chat before exec runs a command, per `tools.exec.approval`."""

    def __init__(
        self,
        mode: Literal["off", "dangerous", "always"],
        workspace: Path,
        publish: Callable[[OutboundMessage], Awaitable[object]],
        timeout: float,
        choose: Callable[[str], str] = secrets.choice,
    ) -> None:
        self._mode = mode
        self._workspace = workspace
        self._publish = publish
        self._timeout = timeout
        self._choose = choose
        self._pending: dict[str, _Pending] = {}

    def install(self, hooks: Hooks) -> None:
        """Register the hook and the /approve and /deny commands (answered at once, never queued)."""
        if self._mode == "off":
            return
        hooks.on("before_tool_call", self.check, timeout=None)
        hooks.command("approve", self.approve)
        hooks.command("deny", self.deny)

    async def check(self, event: BeforeToolCall) -> Block | None:
        """Let exec go on, or wait for the owner's decision and block it unless approved."""
        if event.tool != "exec" or event.chat is None:
            return None
        command = str(event.arguments.get("command", ""))
        reason = "every command is checked" if self._mode == "always" else danger(command, self._workspace)
        if reason is None:
            return None
        code = self._new_code()
        pending = _Pending(event.chat, command, asyncio.get_running_loop().create_future())
        self._pending[code] = pending
        logger.warning("[%s] exec waits for approval %s (%s): %s", event.session_key, code, reason, command)
        try:
            await self._publish(
                OutboundMessage(event.chat, f"Run `{command}`? Reply /approve {code} or /deny {code}", kind="notice")
            )
            async with asyncio.timeout(self._timeout):
                approved = await pending.decided
        except TimeoutError:
            return Block(f"the owner did not approve this command within {self._timeout:g}s, so it did not run")
        finally:
            self._pending.pop(code, None)
        return None if approved else Block("the owner denied this command, so it did not run")

    async def approve(self, event: CommandInvoked) -> str:
        """`/approve CODE`: run the waiting command."""
        return self._decide(event, True)

    async def deny(self, event: CommandInvoked) -> str:
        """`/deny CODE`: refuse the waiting command."""
        return self._decide(event, False)

    def _decide(self, event: CommandInvoked, approved: bool) -> str:
        if event.role != "owner":
            return "Only the bot's owners can approve or deny commands."
        code = event.args.strip().upper()
        pending = self._pending.get(code)
        if pending is None or pending.decided.done():
            waiting = ", ".join(self._pending) or "none"
            return f"No command is waiting for {code or 'that code'} (waiting: {waiting})."
        pending.decided.set_result(approved)
        return f"{'Approved' if approved else 'Denied'}: `{pending.command}`."

    def _new_code(self) -> str:
        while (code := "".join(self._choose(CODE_ALPHABET) for _ in range(CODE_LENGTH))) in self._pending:
            pass
        return code

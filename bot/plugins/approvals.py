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
from bot.hooks.events import BeforeToolCall, Block, CommandInvoked
from bot.hooks.handlers import Hooks
from bot.tools.protected import ProtectedPaths

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
    subject: str
    decided: asyncio.Future[bool]


FILE_WRITERS = frozenset({"write_file", "edit_file"})
Answer = Literal["approved", "denied", "timed out"]
ApprovalMode = Literal["off", "dangerous", "always", "unsandboxed"]
"""`tools.exec.approval`'s modes, and `unsandboxed`: every command asks, since no sandbox holds it."""


class ExecApprovals:
    """Asks an owner in the turn's chat before a risky exec command or a change to the bot's own rules."""

    def __init__(
        self,
        mode: ApprovalMode,
        workspace: Path,
        publish: Callable[[OutboundMessage], Awaitable[object]],
        timeout: float,
        protected: ProtectedPaths | None = None,
        choose: Callable[[str], str] = secrets.choice,
    ) -> None:
        self._mode = mode
        self._workspace = workspace
        self._publish = publish
        self._timeout = timeout
        self._protected = protected or ProtectedPaths(workspace, ())
        self._choose = choose
        self._pending: dict[str, _Pending] = {}

    def install(self, hooks: Hooks) -> None:
        """Register the hook and the /approve and /deny commands (answered at once, never queued)."""
        if self._mode == "off" and not self._protected:
            return
        hooks.on("before_tool_call", self.check, timeout=None, plugin="approvals")
        hooks.command("approve", self.approve)
        hooks.command("deny", self.deny)

    async def check(self, event: BeforeToolCall) -> Block | None:
        """Let the call go on, or wait for an owner's decision and block it unless approved."""
        if event.chat is None:
            return None
        if event.tool in FILE_WRITERS:
            return await self._check_rule_change(event, event.chat)
        if event.tool != "exec":
            return None
        command = str(event.arguments.get("command", ""))
        rule = self._protected.named_in(command)
        reason = self._exec_reason(command) or (f"it may change {rule}, one of the bot's own rules" if rule else None)
        if reason is None:
            return None
        where = " on the host (no sandbox)" if self._mode == "unsandboxed" else ""
        answer = await self._ask(event, event.chat, command, f"Run `{command}`{where}?", reason)
        if answer != "approved":
            return self._refusal("command", answer)
        if rule:
            self._protected.grant(event.session_key, command)
        return None

    def _exec_reason(self, command: str) -> str | None:
        if self._mode == "unsandboxed":
            return "exec has no sandbox here, so every command is checked until tools.exec.sandbox is off"
        if self._mode == "always":
            return "every command is checked"
        return danger(command, self._workspace) if self._mode == "dangerous" else None

    async def _check_rule_change(self, event: BeforeToolCall, chat: ChatRef) -> Block | None:
        target = (self._workspace.expanduser() / str(event.arguments.get("path", ""))).resolve()
        rule = self._protected.covering(target)
        if rule is None:
            return None
        shown = target.relative_to(self._workspace.expanduser().resolve())
        question = f"Let {event.tool} change `{shown}`, one of the bot's own rules?"
        answer = await self._ask(event, chat, f"{event.tool} {shown}", question, f"{rule} is protected")
        return None if answer == "approved" else self._refusal("change", answer)

    async def _ask(self, event: BeforeToolCall, chat: ChatRef, subject: str, question: str, reason: str) -> Answer:
        """Post the question with a fresh code and wait for /approve or /deny, or the timeout."""
        code = self._new_code()
        pending = _Pending(chat, subject, asyncio.get_running_loop().create_future())
        self._pending[code] = pending
        logger.warning("[%s] %s waits for approval %s (%s): %s", event.session_key, event.tool, code, reason, subject)
        try:
            await self._publish(
                OutboundMessage(chat, f"{question} Reply /approve {code} or /deny {code}", kind="notice")
            )
            async with asyncio.timeout(self._timeout):
                return "approved" if await pending.decided else "denied"
        except TimeoutError:
            return "timed out"
        finally:
            self._pending.pop(code, None)

    def _refusal(self, what: str, answer: Answer) -> Block:
        if answer == "denied":
            return Block(f"the owner denied this {what}, so it did not run")
        return Block(f"the owner did not approve this {what} within {self._timeout:g}s, so it did not run")

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
        return f"{'Approved' if approved else 'Denied'}: `{pending.subject}`."

    def _new_code(self) -> str:
        while (code := "".join(self._choose(CODE_ALPHABET) for _ in range(CODE_LENGTH))) in self._pending:
            pass
        return code

"""Exec approvals, built as a before_tool_call hook: risky commands wait for an owner's button or /approve.

/approve and /deny are answered in bot/agent/commands/approval.py, through `decide`."""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from bot.bus import ChatRef, Choice, InboundMessage, OutboundMessage, Trust
from bot.hooks.handlers import Hooks
from bot.hooks.hook_events import BeforeToolCall, Block
from bot.plugins.allowlist import AllowList
from bot.plugins.danger import danger
from bot.tools.protected import ProtectedPaths

logger = logging.getLogger(__name__)

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 3

Verdict = Literal["once", "always", "deny"]
CHOICES = (
    Choice("once", "Allow once", "primary"),
    Choice("always", "Allow always"),
    Choice("deny", "Deny", "danger"),
)
"""The buttons under an approval prompt; their ids are the verdicts."""
DECIDED = {"once": "Allowed once", "always": "Allowed always", "deny": "Denied"}
TYPED = {"once": "Approved", "always": "Approved always", "deny": "Denied"}


@dataclass
class _Pending:
    chat: ChatRef
    subject: str
    question: str
    decided: asyncio.Future[Verdict]
    typed_by: str = ""  # who decided with /approve or /deny, so the prompt shows it and loses its buttons


FILE_WRITERS = frozenset({"write_file", "edit_file"})
Answer = Literal["approved", "denied", "timed out"]
ApprovalMode = Literal["off", "dangerous", "always", "unsandboxed"]
"""`tools.exec.approval`'s modes, and `unsandboxed`: every command asks, since no sandbox holds it."""
Decider = Literal["owner", "admin"]


class ExecApprovals:
    """Asks in the turn's chat before a risky exec command or a change to the bot's own rules."""

    def __init__(
        self,
        mode: ApprovalMode,
        workspace: Path,
        publish: Callable[[OutboundMessage], Awaitable[object]],
        timeout: float,
        protected: ProtectedPaths | None = None,
        choose: Callable[[str], str] = secrets.choice,
        allowed: AllowList | None = None,
        by: Decider = "owner",
    ) -> None:
        self._mode = mode
        self._workspace = workspace
        self._publish = publish
        self._timeout = timeout
        self._protected = protected or ProtectedPaths(workspace, ())
        self._choose = choose
        self._allowed = allowed
        self._lowest = Trust.ADMIN if by == "admin" else Trust.OWNER
        self._pending: dict[str, _Pending] = {}

    def install(self, hooks: Hooks) -> None:
        """Register the hook and the buttons' prompt handler."""
        if self._mode == "off" and not self._protected:
            return
        hooks.on("before_tool_call", self.check, timeout=None, plugin="approvals")
        hooks.prompts.on(self.pressed)

    async def check(self, event: BeforeToolCall) -> Block | None:
        """Let the call go on, or wait for a decision and block it unless allowed."""
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
        """Post the question with a fresh code and buttons; wait for a decision or the timeout."""
        if self._allowed is not None and self._allowed.allows(subject):
            logger.info("[%s] %s allowed always: %s", event.session_key, event.tool, subject)
            return "approved"
        code = self._new_code()
        pending = _Pending(chat, subject, question, asyncio.get_running_loop().create_future())
        self._pending[code] = pending
        logger.warning("[%s] %s waits for approval %s (%s): %s", event.session_key, event.tool, code, reason, subject)
        try:
            text = f"{question} Reply /approve {code} or /deny {code}"
            await self._publish(OutboundMessage(chat, text, kind="notice", choices=CHOICES, prompt_id=code))
            async with asyncio.timeout(self._timeout):
                verdict = await pending.decided
        except TimeoutError:
            await self._close(pending, code, f"{question}\nTimed out, not run.")
            return "timed out"
        finally:
            self._pending.pop(code, None)
        if pending.typed_by:
            await self._close(pending, code, f"{question}\n{DECIDED[verdict]} by {pending.typed_by} (typed).")
        if verdict == "always" and self._allowed is not None:
            self._allowed.add(subject)
            logger.warning("[%s] allowed always from now on: %s", event.session_key, subject)
        return "denied" if verdict == "deny" else "approved"

    async def _close(self, pending: _Pending, code: str, text: str) -> None:
        """Replace the prompt, buttons removed, with how it ended (it was decided without a press)."""
        await self._publish(OutboundMessage(pending.chat, text, kind="notice", prompt_id=code))

    def _refusal(self, what: str, answer: Answer) -> Block:
        if answer == "denied":
            return Block(f"the owner denied this {what}, so it did not run")
        return Block(f"the owner did not approve this {what} within {self._timeout:g}s, so it did not run")

    async def pressed(self, message: InboundMessage) -> bool:
        """Take a press on one of our prompts: decide if the presser may, else tell only them; True when ours."""
        press = message.press
        pending = self._pending.get(press.prompt_id) if press else None
        if press is None or pending is None or pending.decided.done():
            return False
        chat = message.chat
        if not message.trust.at_least(self._lowest):
            logger.info(
                "[%s] approval %s pressed by %s, who may not decide",
                chat.session_key,
                press.prompt_id,
                message.sender_id,
            )
            await self._publish(
                OutboundMessage(chat, f"Not yours: {self.who_decides()}", kind="notice", private_to=message.sender_id)
            )
            return True
        verdict: Verdict = press.choice_id if press.choice_id in DECIDED else "deny"  # type: ignore[assignment]
        pending.decided.set_result(verdict)
        who = message.sender_name or message.sender_id
        logger.info("[%s] approval %s: %s by %s", chat.session_key, press.prompt_id, verdict, message.sender_id)
        decided = f"{pending.question}\n{DECIDED[verdict]} by {who}."
        await self._publish(OutboundMessage(chat, decided, kind="notice", edit_of=press.prompt_message_id))
        return True

    def may_decide(self, role: Trust) -> bool:
        """Whether a sender of `role` may approve or deny (`approvals.by`)."""
        return role.at_least(self._lowest)

    def who_decides(self) -> str:
        """Who may approve or deny, as a sentence."""
        who = "owners" if self._lowest is Trust.OWNER else "owners and admins"
        return f"only the bot's {who} can approve or deny commands."

    def waiting(self) -> list[str]:
        """The codes of the commands waiting for a decision."""
        return [code for code, pending in self._pending.items() if not pending.decided.done()]

    def decide(self, code: str, verdict: Verdict, by: str) -> str | None:
        """Decide the command waiting under `code` (typed by `by`): its subject, or None when none waits there."""
        pending = self._pending.get(code.upper())
        if pending is None or pending.decided.done():
            return None
        pending.typed_by = by
        pending.decided.set_result(verdict)
        return pending.subject

    def _new_code(self) -> str:
        while (code := "".join(self._choose(CODE_ALPHABET) for _ in range(CODE_LENGTH))) in self._pending:
            pass
        return code

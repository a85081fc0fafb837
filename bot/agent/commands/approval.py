"""/approve and /deny: a command waiting in the exec approvals is decided by its typed code."""

from __future__ import annotations

from bot.bus import InboundMessage
from bot.plugins.approvals import TYPED, ExecApprovals, Verdict


def approval_answer(approvals: ExecApprovals, message: InboundMessage, args: str, deny: bool) -> str:
    """`/approve CODE [always]` or `/deny CODE`: decide the waiting command, or say why nothing was decided."""
    if not approvals.may_decide(message.trust):
        return approvals.who_decides().capitalize()
    words = args.split()
    code = (words or [""])[0].upper()
    verdict: Verdict = "deny" if deny else "always" if words[1:2] == ["always"] else "once"
    subject = approvals.decide(code, verdict, message.sender_name or message.sender_id)
    if subject is None:
        return f"No command is waiting for {code or 'that code'} (waiting: {', '.join(approvals.waiting()) or 'none'})."
    return f"{TYPED[verdict]}: `{subject}`."

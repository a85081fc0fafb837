"""The control socket's sessions.resume op: a /resume from the owner into the chat's lane, or a one-line refusal."""

from __future__ import annotations

from bot.bus import ChatRef, InboundMessage, Trust
from bot.ops.session_ops import session_handlers


async def test_resume_publishes_the_owners_command_and_refuses_bad_requests() -> None:
    published: list[InboundMessage] = []

    async def publish(message: InboundMessage) -> None:
        published.append(message)

    resume = session_handlers(publish)["sessions.resume"]
    assert await resume({"chat": "telegram:5", "number": 2}) == {"ok": True}
    assert (await resume({"chat": "telegram", "number": 2}))["ok"] is False
    assert (await resume({"chat": "telegram:5", "number": 0}))["ok"] is False
    (sent,) = published
    assert (sent.chat, sent.text, sent.trust, sent.kind) == (ChatRef("telegram", "5"), "/resume 2", Trust.OWNER, "user")

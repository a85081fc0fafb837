"""The message tool: say something now, in this chat or (owners only) in another one."""

from __future__ import annotations

from typing import Any

from bot.bus import ChatRef, OutboundMessage, Trust
from bot.errors import ToolError
from bot.tools.base import Tool, ToolContext


class MessageTool(Tool):
    """Sends a message right away: to the current chat as progress, to another chat as a notice."""

    name = "message"
    description = (
        "Send a message right away: a progress note in this chat during a long task, or (owners only) "
        "a message to another chat. Your final answer is sent automatically; do not send it twice."
    )
    parameters = {
        "type": "object",
        "properties": {
            "text": {"type": "string", "minLength": 1, "description": "The message."},
            "to": {
                "type": "string",
                "description": "Another chat, channel:chat_id[:thread_id] such as telegram:123. Omit for this chat.",
            },
        },
        "required": ["text"],
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        target = _chat(args["to"]) if args.get("to") else ctx.chat
        if target == ctx.chat:
            await ctx.send(OutboundMessage(ctx.chat, args["text"], in_reply_to=ctx.turn_id, kind="progress"))
            return "Sent to this chat."
        if ctx.trust is not Trust.OWNER:
            raise ToolError("only the bot's owners can send messages to other chats; leave out 'to' to write here.")
        await ctx.send(OutboundMessage(target, args["text"], kind="notice"))
        return f"Sent to {target.session_key}."


def _chat(text: str) -> ChatRef:
    try:
        return ChatRef.parse(text.strip())
    except ValueError as exc:
        raise ToolError(str(exc)) from exc

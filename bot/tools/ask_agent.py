"""The ask_agent tool: put a question to another agent of this gateway and read its answer."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from bot.errors import ToolError
from bot.tools.base import Tool, ToolContext

AskAgent = Callable[[str, str, ToolContext], Awaitable[str]]
"""(agent name, question, the asking turn's context) -> the other agent's answer."""


class AskAgentTool(Tool):
    """Asks one of the agents this agent is granted (`tools.ask_agent`); it answers from its own memory."""

    name: str = "ask_agent"
    description: str = (
        "Ask another agent of this gateway a question and get its answer. It answers from its own session for "
        "this chat and its own memory and instructions; it cannot see yours. Give it everything it needs in "
        "the message."
    )

    def __init__(self, granted: Callable[[], list[str]], ask: AskAgent) -> None:
        self._granted = granted
        self._ask = ask
        self.parameters: dict[str, Any] = {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The agent to ask: one of " + ", ".join(granted())},
                "message": {"type": "string", "description": "The question, self-contained."},
            },
            "required": ["name", "message"],
            "additionalProperties": False,
        }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        name, message = str(args["name"]), str(args["message"]).strip()
        if name not in self._granted():
            raise ToolError(f"you may not ask agent {name!r}; you may ask: {', '.join(self._granted()) or 'none'}")
        if not message:
            raise ToolError("the message is empty")
        return await self._ask(name, message, ctx)

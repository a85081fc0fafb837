"""The spawn tool: hand a longer task to a background sub-agent and keep talking."""

from __future__ import annotations

from typing import Any, Protocol

from bot.tools.base import Tool, ToolContext


class Spawner(Protocol):
    """Whatever runs sub-agents (the agent's SubagentManager)."""

    def spawn(self, task: str, label: str, origin: ToolContext) -> str:
        """Start a sub-agent for `task` and return its id; its result arrives in the origin chat later."""
        ...


class SpawnTool(Tool):
    """Starts a sub-agent; the result comes back to this chat later as a system message."""

    name: str = "spawn"
    description: str = (
        "Start a background sub-agent for a self-contained task that takes many steps (research, "
        "long file work). You get an acknowledgement at once; the result arrives later in this chat "
        "and you then report it to the user. The sub-agent cannot message the user or spawn others."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "task": {"type": "string", "description": "Everything the sub-agent needs to know to do the task."},
            "label": {"type": "string", "description": "A short name for the task."},
        },
        "required": ["task"],
        "additionalProperties": False,
    }

    def __init__(self, subagents: Spawner) -> None:
        self._subagents = subagents

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        label = args.get("label") or args["task"][:40]
        agent_id = self._subagents.spawn(args["task"], label, ctx)
        return f"Started background task {agent_id} ('{label}'). Its result will arrive in this chat when it is done."

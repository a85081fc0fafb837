"""The load_skill tool: a skill's full instructions, on demand, for every trust level."""

from __future__ import annotations

from typing import Any

from bot.errors import ToolError
from bot.skills import SkillLibrary
from bot.tools.base import Tool, ToolContext


class LoadSkillTool(Tool):
    """Returns a skill's instructions, or what the machine lacks to use it."""

    name = "load_skill"
    read_only = True
    description = (
        "Load the full instructions of a skill listed in the system prompt. "
        "Call it when a task matches a skill's description, then follow the instructions."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {"name": {"type": "string", "description": "The skill's name, as listed."}},
        "required": ["name"],
    }
    for_everyone = True  # reads only skill text: no side effects, nothing private

    def __init__(self, library: SkillLibrary) -> None:
        self._library = library

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        """The skill's instructions with its folder, so files beside SKILL.md can be read."""
        skill = self._library.get(args["name"].strip())
        if skill is None:
            known = ", ".join(s.name for s in self._library.skills()) or "none"
            raise ToolError(f"there is no skill named {args['name']!r}. Skills: {known}.")
        needs = skill.missing()
        if needs:
            return f"The {skill.name} skill is unavailable here: it needs {', '.join(needs)}."
        return f"# Skill: {skill.name}\n\nFolder: {skill.folder}\n\n{skill.instructions}"

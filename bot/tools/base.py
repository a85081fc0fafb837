"""Tools: the base class, the per-turn context, and the registry that runs them."""

from __future__ import annotations

import json
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from bot.bus import ChatRef, OutboundMessage, Trust
from bot.errors import ToolError, ToolUnavailable
from bot.llm.types import ToolCall

if TYPE_CHECKING:
    from bot.hooks.handlers import Hooks

logger = logging.getLogger(__name__)

EMPTY_OUTPUT = "(empty)"  # what the model reads when a tool returned nothing, so it never mistakes silence for failure


@dataclass(frozen=True, slots=True)
class ToolContext:
    """Who a tool runs for: passed explicitly, so concurrent turns never share it."""

    chat: ChatRef
    sender_id: str
    trust: Trust
    turn_id: str
    send: Callable[[OutboundMessage], Awaitable[None]]
    is_direct: bool = True
    persona: str | None = None  # the persona the turn speaks as: what it spawns inherits its model and tools
    person: str | None = None  # the sender's person (`identities`): who their cron jobs are charged to
    memory_dir: Path | None = None  # the chat's memory scope folder: what recall searches
    shown_from: int | None = None  # the session's messages from this number on are in the prompt already
    # A running call reports what it has so far (output as it arrives, a step); the turn emits it as a tool update.
    progress: Callable[[str], None] = field(default=lambda text: None, compare=False)

    @property
    def session_key(self) -> str:
        return self.chat.session_key


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What the model reads back after a tool call."""

    call_id: str
    name: str
    content: str
    is_error: bool = False

    def as_message(self) -> dict[str, Any]:
        """The `tool` role message that answers the call."""
        return {"role": "tool", "tool_call_id": self.call_id, "name": self.name, "content": self.content}


class Tool(ABC):
    """A capability the model may call: a name, a JSON schema, and `run`."""

    name: str
    description: str
    parameters: dict[str, Any] = {"type": "object", "properties": {}}
    for_everyone: ClassVar[bool] = False  # harmless for any sender, whatever tools.by_role says
    read_only: bool = False  # changes nothing, so it may run on arguments mended from broken JSON
    min_trust: Trust | None = None  # when set, exactly the senders at or above it see the tool (MCP servers' `trust`)

    @abstractmethod
    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        """Do the work; raise ToolError for anything the model should hear about."""

    def definition(self) -> dict[str, Any]:
        """The OpenAI function-tool definition."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


class ToolRegistry:
    """Holds tools, shows each trust level its own set, and turns failures into error results."""

    def __init__(
        self,
        tools: Iterable[Tool] = (),
        role_tools: Mapping[Trust, Iterable[str]] | None = None,
        hooks: Hooks | None = None,
    ) -> None:
        self.hooks = hooks
        self._tools: dict[str, Tool] = {}
        self._validators: dict[str, Any] = {}
        self._role_tools = {role: frozenset(names) for role, names in (role_tools or {}).items()}
        self._definitions: dict[Trust, list[dict[str, Any]]] = {}
        for tool in tools:
            self.register(tool)

    def set_roles(self, role_tools: Mapping[Trust, Iterable[str]]) -> None:
        """Show each role these tool names from the next turn on (a config reload)."""
        self._role_tools = {role: frozenset(names) for role, names in role_tools.items()}
        self._definitions.clear()

    def register(self, tool: Tool) -> None:
        """Add a tool, replacing one of the same name; its schema is checked when first needed."""
        self._tools[tool.name] = tool
        self._validators.pop(tool.name, None)
        self._definitions.clear()

    def _validator(self, name: str) -> Any:
        """The tool's argument validator, built on its first call (importing jsonschema costs ~0.2 s)."""
        validator = self._validators.get(name)
        if validator is None:
            from jsonschema import Draft202012Validator

            Draft202012Validator.check_schema(self._tools[name].parameters)
            validator = self._validators[name] = Draft202012Validator(self._tools[name].parameters)
        return validator

    def unregister(self, name: str) -> None:
        """Withdraw a tool (an MCP server that died); unknown names are ignored."""
        self._tools.pop(name, None)
        self._validators.pop(name, None)
        self._definitions.clear()

    def without(self, excluded: Iterable[str]) -> ToolRegistry:
        """A new registry with the same tools and role sets, minus `excluded`."""
        skip = frozenset(excluded)
        return ToolRegistry([t for n, t in self._tools.items() if n not in skip], self._role_tools, self.hooks)

    def only(self, included: Iterable[str]) -> ToolRegistry:
        """A new registry with the same role sets and just the `included` tools (a persona's)."""
        keep = frozenset(included)
        return ToolRegistry([t for n, t in self._tools.items() if n in keep], self._role_tools, self.hooks)

    def names(self, trust: Trust = Trust.OWNER) -> list[str]:
        """Names of the tools a sender of this trust may call."""
        return [name for name in self._tools if self.allowed(name, trust)]

    def allowed(self, name: str, trust: Trust) -> bool:
        """Owners may call every tool; other roles their set and tools marked `for_everyone`."""
        tool = self._tools.get(name)
        if tool is None:
            return False
        if tool.min_trust is not None:
            return trust.at_least(tool.min_trust)
        return trust is Trust.OWNER or tool.for_everyone or name in self._role_tools.get(trust, frozenset())

    def definitions(self, trust: Trust) -> list[dict[str, Any]]:
        """Tool definitions shown to the model for this trust level (cached)."""
        if trust not in self._definitions:
            self._definitions[trust] = [self._tools[name].definition() for name in self.names(trust)]
        return self._definitions[trust]

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        """Run one call; every failure becomes an error result the model can recover from."""
        started = time.perf_counter()
        if self.hooks and self.hooks.has("before_tool_call"):
            from bot.hooks.hook_events import BeforeToolCall, Block, Replace

            event = BeforeToolCall(call.name, dict(call.arguments), ctx.chat, ctx.sender_id, ctx.trust.value)
            decision = await self.hooks.run("before_tool_call", event)
            if isinstance(decision, Block):
                logger.info("[%s] tool %s blocked by a plugin: %s", ctx.session_key, call.name, decision.reason)
                return ToolResult(call.id, call.name, f"Error: blocked: {decision.reason}", is_error=True)
            if isinstance(decision, Replace) and isinstance(decision.value, dict):
                # The plugin's arguments are whole, whatever the model sent: they are no repaired guess.
                call = replace(call, arguments=decision.value, raw_arguments=json.dumps(decision.value, default=str))
        result = await self._execute(call, ctx, started)
        if self.hooks and self.hooks.has("after_tool_call"):
            from bot.hooks.hook_events import AfterToolCall, Replace

            decision = await self.hooks.run(
                "after_tool_call",
                AfterToolCall(
                    call.name,
                    dict(call.arguments),
                    result.content,
                    result.is_error,
                    ctx.chat,
                    ctx.sender_id,
                    ctx.trust.value,
                ),
            )
            if isinstance(decision, Replace):
                result = replace(result, content=str(decision.value))
        return result

    async def _execute(self, call: ToolCall, ctx: ToolContext, started: float) -> ToolResult:
        try:
            content = await self._run_again_if_passing(call, ctx)
        except ToolError as exc:
            logger.info("[%s] tool %s refused: %s", ctx.session_key, call.name, exc)
            return ToolResult(call.id, call.name, f"Error: {exc}", is_error=True)
        except Exception:
            logger.exception("[%s] tool %s crashed", ctx.session_key, call.name)
            return ToolResult(call.id, call.name, f"Error: the {call.name} tool failed unexpectedly.", is_error=True)
        logger.debug("[%s] tool %s ran in %.1f ms", ctx.session_key, call.name, (time.perf_counter() - started) * 1000)
        return ToolResult(call.id, call.name, content if content and content.strip() else EMPTY_OUTPUT)

    async def _run_again_if_passing(self, call: ToolCall, ctx: ToolContext) -> str:
        """`_run`; a read-only tool that failed on something passing is tried once more, a side-effecting one never."""
        try:
            return await self._run(call, ctx)
        except ToolUnavailable as exc:
            tool = self._tools.get(call.name)
            if tool is None or not tool.read_only:
                raise
            logger.info("[%s] tool %s failed (%s); trying it once more", ctx.session_key, call.name, exc)
            return await self._run(call, ctx)

    async def _run(self, call: ToolCall, ctx: ToolContext) -> str:
        tool = self._tools.get(call.name)
        if tool is None:
            known = ", ".join(self.names(ctx.trust)) or "none"
            raise ToolError(f"there is no tool named {call.name!r}. Available tools: {known}.")
        if not self.allowed(call.name, ctx.trust):
            raise ToolError(f"the {call.name} tool is not available to this sender (role {ctx.trust.value}).")
        if call.arguments_error:
            raise ToolError(f"{call.arguments_error}; send the arguments as one JSON object.")
        if call.repaired and not tool.read_only:
            logger.info(
                "[%s] tool %s not run on repaired arguments: %.200r", ctx.session_key, call.name, call.raw_arguments
            )
            raise ToolError(
                f"the arguments of this {call.name} call arrived cut off or malformed, and {call.name} changes things, "
                "so it was not run. Send the call again with complete JSON arguments."
            )
        problems = sorted(self._validator(call.name).iter_errors(call.arguments), key=lambda e: list(e.path))
        if problems:
            details = "; ".join(_describe_problem(problem) for problem in problems[:5])
            raise ToolError(f"invalid arguments for {call.name}: {details}")
        return await tool.run(call.arguments, ctx)


def _describe_problem(problem: Any) -> str:
    where = ".".join(str(part) for part in problem.path)
    return f"{where}: {problem.message}" if where else problem.message

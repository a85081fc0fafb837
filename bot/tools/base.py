"""Tools: the base class, the per-turn context, and the registry that runs them."""

from __future__ import annotations

import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

from bot.bus import TRUST_ORDER, ChatRef, OutboundMessage, Trust
from bot.errors import ToolError
from bot.llm import ToolCall

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ToolContext:
    """Who a tool runs for: passed explicitly, so concurrent turns never share it."""

    chat: ChatRef
    sender_id: str
    trust: Trust
    turn_id: str
    send: Callable[[OutboundMessage], Awaitable[None]]
    is_direct: bool = True

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

    name: ClassVar[str]
    description: ClassVar[str]
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}
    for_everyone: ClassVar[bool] = False  # harmless for any sender, whatever tools.guest_tools says
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

    def __init__(self, tools: Iterable[Tool] = (), guest_tools: Iterable[str] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._validators: dict[str, Any] = {}
        self._guest_tools = frozenset(guest_tools)
        self._definitions: dict[Trust, list[dict[str, Any]]] = {}
        for tool in tools:
            self.register(tool)

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
        """A new registry with the same tools and guest set, minus `excluded`."""
        skip = frozenset(excluded)
        return ToolRegistry([t for n, t in self._tools.items() if n not in skip], self._guest_tools)

    def names(self, trust: Trust = Trust.OWNER) -> list[str]:
        """Names of the tools a sender of this trust may call."""
        return [name for name in self._tools if self.allowed(name, trust)]

    def allowed(self, name: str, trust: Trust) -> bool:
        """Owners may call every tool; guests the guest set and tools marked `for_everyone`."""
        tool = self._tools.get(name)
        if tool is not None and tool.min_trust is not None:
            return TRUST_ORDER.index(trust) >= TRUST_ORDER.index(tool.min_trust)
        return tool is not None and (trust is Trust.OWNER or tool.for_everyone or name in self._guest_tools)

    def definitions(self, trust: Trust) -> list[dict[str, Any]]:
        """Tool definitions shown to the model for this trust level (cached)."""
        if trust not in self._definitions:
            self._definitions[trust] = [self._tools[name].definition() for name in self.names(trust)]
        return self._definitions[trust]

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        """Run one call; every failure becomes an error result the model can recover from."""
        started = time.perf_counter()
        try:
            content = await self._run(call, ctx)
        except ToolError as exc:
            logger.info("[%s] tool %s refused: %s", ctx.session_key, call.name, exc)
            return ToolResult(call.id, call.name, f"Error: {exc}", is_error=True)
        except Exception:
            logger.exception("[%s] tool %s crashed", ctx.session_key, call.name)
            return ToolResult(call.id, call.name, f"Error: the {call.name} tool failed unexpectedly.", is_error=True)
        logger.debug("[%s] tool %s ran in %.1f ms", ctx.session_key, call.name, (time.perf_counter() - started) * 1000)
        return ToolResult(call.id, call.name, content)

    async def _run(self, call: ToolCall, ctx: ToolContext) -> str:
        tool = self._tools.get(call.name)
        if tool is None:
            known = ", ".join(self.names(ctx.trust)) or "none"
            raise ToolError(f"there is no tool named {call.name!r}. Available tools: {known}.")
        if not self.allowed(call.name, ctx.trust):
            raise ToolError(f"the {call.name} tool is only available to the bot's owners.")
        if call.arguments_error:
            raise ToolError(f"{call.arguments_error}; send the arguments as one JSON object.")
        problems = sorted(self._validator(call.name).iter_errors(call.arguments), key=lambda e: list(e.path))
        if problems:
            details = "; ".join(_describe_problem(problem) for problem in problems[:5])
            raise ToolError(f"invalid arguments for {call.name}: {details}")
        return await tool.run(call.arguments, ctx)


def _describe_problem(problem: Any) -> str:
    where = ".".join(str(part) for part in problem.path)
    return f"{where}: {problem.message}" if where else problem.message

"""One agent turn: call the model, run the tools it asks for, repeat until it answers."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.agent.stream import StreamEmitter, summarize
from bot.agent.tool_results import DEFAULT_TOOL_RESULT_CHARS, clip_tool_message
from bot.events import EventBus, LLMCalled, ToolCalled, ToolFinished
from bot.llm.types import LENGTH_NOTE, Provider, ToolCall, Usage
from bot.tools.base import ToolContext, ToolRegistry

EMPTY_REPLY = "I have nothing to add."


@dataclass(frozen=True, slots=True)
class TurnResult:
    """How a turn ended: the final text, whether it ran out of iterations, and whether the text was cut short."""

    text: str
    iterations: int
    hit_limit: bool = False
    incomplete: bool = False


def iteration_limit_message(limit: int) -> str:
    """The honest reply when a turn used up its iterations."""
    return (
        f"I stopped after {limit} steps without finishing. Tell me to continue, "
        "or narrow the request down, and I'll pick it up from here."
    )


def tool_call_message(content: str, calls: tuple[ToolCall, ...]) -> dict[str, Any]:
    """The assistant message that records a round of tool calls."""
    return {"role": "assistant", "content": content or None, "tool_calls": [c.as_message_part() for c in calls]}


@dataclass
class TurnRunner:
    """Runs the LLM↔tool loop; shared by chat turns and sub-agents."""

    provider: Provider
    registry: ToolRegistry
    events: EventBus
    max_iterations: int
    max_tool_result_chars: int = DEFAULT_TOOL_RESULT_CHARS

    async def run(
        self,
        messages: list[dict[str, Any]],
        ctx: ToolContext,
        record: Callable[[list[dict[str, Any]]], None],
        on_usage: Callable[[Usage], None] | None = None,
        stream: StreamEmitter | None = None,
        steer: Callable[[], list[str]] | None = None,
    ) -> TurnResult:
        """Iterate until the model answers without tools; `record` receives each new message.

        `steer` returns the texts of messages that arrived meanwhile; they join the turn before each later model call.
        """
        tools = self.registry.definitions(ctx.trust) or None
        cut_rounds = 0
        for iteration in range(1, self.max_iterations + 1):
            if steer and iteration > 1:
                arrived = [{"role": "user", "content": text} for text in steer()]
                messages.extend(arrived)
                if arrived:
                    record(arrived)
            started = time.perf_counter()
            if stream is None:
                response = await self.provider.chat(messages, tools)
            else:
                try:
                    response = await self.provider.chat(messages, tools, stream.begin())
                except BaseException:
                    stream.end("error")
                    raise
                stream.end(response.finish_reason)
            self.events.emit(
                LLMCalled(
                    ctx.session_key,
                    self.provider.model,
                    response.usage.prompt_tokens,
                    response.usage.completion_tokens,
                    time.perf_counter() - started,
                )
            )
            if on_usage:
                on_usage(response.usage)
            # Calls cut at max_tokens are never run (the registry reports them to the model); cut twice, give up.
            cut_rounds += bool(response.tool_calls) and response.finish_reason == "length"
            if not response.tool_calls or cut_rounds > 1:
                text = response.content or (LENGTH_NOTE if response.tool_calls else EMPTY_REPLY)
                final: dict[str, Any] = {"role": "assistant", "content": text}
                if response.incomplete:
                    final["incomplete"] = True
                messages.append(final)
                record([final])
                return TurnResult(text, iteration, incomplete=response.incomplete)
            request = tool_call_message(response.content, response.tool_calls)
            messages.append(request)
            record([request])
            for call in response.tool_calls:
                self.events.emit(
                    ToolCalled(ctx.session_key, call.name, call.id, ctx.turn_id, summarize(call.arguments))
                )
                tool_started = time.perf_counter()
                result = await self.registry.execute(call, ctx)
                duration = time.perf_counter() - tool_started
                self.events.emit(
                    ToolFinished(
                        ctx.session_key,
                        call.name,
                        call.id,
                        result.is_error,
                        duration,
                        ctx.turn_id,
                        summarize(result.content),
                    )
                )
                answer = result.as_message()
                messages.append(clip_tool_message(answer, self.max_tool_result_chars))
                record([await self._persisted(answer, ctx)])
        text = iteration_limit_message(self.max_iterations)
        final = {"role": "assistant", "content": text}
        messages.append(final)
        record([final])
        return TurnResult(text, self.max_iterations, hit_limit=True)

    async def _persisted(self, answer: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        """The tool result as the session saves it: a tool_result_persist hook may replace its text."""
        hooks = self.registry.hooks
        if not (hooks and hooks.has("tool_result_persist")):
            return answer
        from bot.hooks.events import Replace, ToolResultPersist

        event = ToolResultPersist(answer["name"], answer["content"], ctx.session_key)
        decision = await hooks.run("tool_result_persist", event)
        return {**answer, "content": str(decision.value)} if isinstance(decision, Replace) else answer

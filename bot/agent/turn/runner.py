"""One agent turn: call the model, run the tools it asks for, repeat until it answers."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from bot.agent.turn.repeats import STOP_AT, WARN_AT, RepeatGuard, refusal, stopped_reply
from bot.agent.turn.stream import StreamEmitter, summarize
from bot.agent.turn.tool_progress import ToolProgress
from bot.agent.turn.tool_results import DEFAULT_TOOL_RESULT_CHARS, clip_tool_message
from bot.errors import BudgetExceeded, ProviderError
from bot.events import EventBus, LLMCalled, ToolCalled, ToolFinished
from bot.llm.types import LENGTH_NOTE, Provider, ToolCall, Usage, tool_call_message
from bot.tools.base import ToolContext, ToolRegistry, ToolResult

EMPTY_REPLY = "I have nothing to add."
NOT_RUN = "Error: not run: the turn was ended for repeating the same call."


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


def failed_tools_reply(names: list[str]) -> str:
    """The reply when the model answered nothing after tools failed: which ones, so the user knows what broke."""
    listed = " and ".join(dict.fromkeys(names))
    noun, it = ("tool", "it") if len(set(names)) == 1 else ("tools", "them")
    return (
        f"I couldn't finish: the {listed} {noun} failed, and I have no answer without {it}. "
        "Try again, or ask another way."
    )


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
        repeats = RepeatGuard()
        failed: list[str] = []  # the tools that failed in the latest round
        for iteration in range(1, self.max_iterations + 1):
            if steer and iteration > 1:
                arrived = [{"role": "user", "content": text} for text in steer()]
                messages.extend(arrived)
                if arrived:
                    record(arrived)
            started = time.perf_counter()
            try:
                if stream is None:
                    response = await self.provider.chat(messages, tools)
                else:
                    try:
                        response = await self.provider.chat(messages, tools, stream.begin())
                    except BaseException:
                        stream.end("error")
                        raise
                    stream.end(response.finish_reason)
            except ProviderError as exc:
                if not isinstance(exc, BudgetExceeded):  # refused before any call was made
                    failed_call = LLMCalled(
                        ctx.chat,
                        self.provider.model,
                        0,
                        0,
                        time.perf_counter() - started,
                        ctx.turn_id,
                        outcome=type(exc).__name__,
                    )
                    self.events.emit(failed_call)
                raise
            self.events.emit(
                LLMCalled(
                    ctx.chat,
                    self.provider.model,
                    response.usage.prompt_tokens,
                    response.usage.completion_tokens,
                    time.perf_counter() - started,
                    ctx.turn_id,
                    response.usage.cached_tokens,
                )
            )
            if on_usage:
                on_usage(response.usage)
            # Calls cut at max_tokens are never run (the registry reports them to the model); cut twice, give up.
            cut_rounds += bool(response.tool_calls) and response.finish_reason == "length"
            if not response.tool_calls or cut_rounds > 1:
                empty = failed_tools_reply(failed) if failed else EMPTY_REPLY
                text = response.content or (LENGTH_NOTE if response.tool_calls else empty)
                final: dict[str, Any] = {"role": "assistant", "content": text}
                if response.incomplete:
                    final["incomplete"] = True
                if response.reasoning:
                    final["reasoning"] = response.reasoning  # kept with the reply; never sent back to the model
                messages.append(final)
                record([final])
                return TurnResult(text, iteration, incomplete=response.incomplete)
            request = tool_call_message(response.content, response.tool_calls)
            messages.append(request)
            record([request])
            failed = []
            for index, call in enumerate(response.tool_calls):
                count = repeats.record(call)
                if count >= STOP_AT:
                    return self._stop_repeating(response.tool_calls[index:], messages, record, iteration)
                refused = refusal(call, count) if count >= WARN_AT else None
                result = await self._run_call(call, ctx, refused)
                if result.is_error:
                    failed.append(call.name)
                answer = result.as_message()
                messages.append(clip_tool_message(answer, self.max_tool_result_chars))
                record([await self._persisted(answer, ctx)])
        text = iteration_limit_message(self.max_iterations)
        final = {"role": "assistant", "content": text}
        messages.append(final)
        record([final])
        return TurnResult(text, self.max_iterations, hit_limit=True)

    async def _run_call(self, call: ToolCall, ctx: ToolContext, refused: str | None) -> ToolResult:
        """Run one call (or refuse it with `refused` as its error result), reporting both ends as events."""
        self.events.emit(ToolCalled(ctx.chat, call.name, call.id, ctx.turn_id, summarize(call.arguments)))
        started = time.perf_counter()
        if refused is None:
            progress = ToolProgress(self.events, ctx, call)
            try:
                result = await self.registry.execute(call, replace(ctx, progress=progress))
            finally:
                progress.close()
        else:
            result = ToolResult(call.id, call.name, refused, is_error=True)
        self.events.emit(
            ToolFinished(
                ctx.chat,
                call.name,
                call.id,
                result.is_error,
                time.perf_counter() - started,
                ctx.turn_id,
                summarize(result.content),
            )
        )
        return result

    def _stop_repeating(
        self,
        calls: tuple[ToolCall, ...],
        messages: list[dict[str, Any]],
        record: Callable[[list[dict[str, Any]]], None],
        iteration: int,
    ) -> TurnResult:
        """End the turn: the calls left in the round are answered as not run, and the user hears why."""
        answers = [ToolResult(call.id, call.name, NOT_RUN, is_error=True).as_message() for call in calls]
        text = stopped_reply(calls[0])
        final = {"role": "assistant", "content": text}
        messages.extend([*answers, final])
        record([*answers, final])
        return TurnResult(text, iteration)

    async def _persisted(self, answer: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        """The tool result as the session saves it: a tool_result_persist hook may replace its text."""
        hooks = self.registry.hooks
        if not (hooks and hooks.has("tool_result_persist")):
            return answer
        from bot.hooks.hook_events import Replace, ToolResultPersist

        event = ToolResultPersist(answer["name"], answer["content"], ctx.chat)
        decision = await hooks.run("tool_result_persist", event)
        return {**answer, "content": str(decision.value)} if isinstance(decision, Replace) else answer

"""OpenTelemetry export against an in-process OTLP/HTTP collector: one trace per turn, GenAI spans, metrics."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from bot.bus import ChatRef
from bot.config.schema_ops import TelemetryConfig
from bot.events import LLMCalled
from bot.llm.prices import call_cost
from bot.telemetry.costs import CallCosts
from bot.telemetry.otel import OtelTelemetry
from tests.fakes.openai_server import Error, FakeLLM, Text, ToolCalls
from tests.fakes.otlp_collector import FakeCollector
from tests.support.harness import Harness


async def run_turn_with_a_tool(tmp_path: Path, fake_llm: FakeLLM, capture: bool) -> FakeCollector:
    fake_llm.script(ToolCalls((("write_file", {"path": "notes.txt", "content": "secret plan"}),)), Text("done"))
    async with FakeCollector() as collector, Harness(tmp_path, fake_llm) as bot:
        config = TelemetryConfig(otlp_endpoint=collector.endpoint, capture_content=capture)
        telemetry = OtelTelemetry(bot.app.events, config, collector.endpoint, bot.app.bus.stats, export_interval=0.2)
        telemetry.start()
        assert await bot.ask("write it down") == "done"
        await telemetry.stop()
        await collector.wait_for(lambda: len(collector.spans) >= 4 and "gen_ai.client.token.usage" in collector.metrics)
    return collector


async def test_a_turn_is_one_trace_with_a_span_per_model_and_tool_call(tmp_path: Path, fake_llm: FakeLLM) -> None:
    collector = await run_turn_with_a_tool(tmp_path, fake_llm, capture=False)
    (turn,) = [span for span in collector.spans if span["name"] == "invoke_agent relaybot"]
    children = [span for span in collector.spans if span["parent_id"] == turn["span_id"]]
    assert sorted(span["name"] for span in children) == [
        "chat openai/fake-model",
        "chat openai/fake-model",
        "execute_tool write_file",
    ]
    assert {span["trace_id"] for span in collector.spans} == {turn["trace_id"]}
    chat = next(span for span in children if span["name"].startswith("chat"))
    assert chat["attributes"]["gen_ai.request.model"] == "openai/fake-model"
    assert chat["attributes"]["gen_ai.usage.input_tokens"] > 0
    assert chat["attributes"]["gen_ai.usage.output_tokens"] > 0
    assert "relaybot.cost_usd" in chat["attributes"]
    assert turn["resource"]["service.name"] == "relaybot"
    assert "secret plan" not in str(collector.spans) and "write it down" not in str(collector.spans)
    assert {"relaybot.turns", "gen_ai.client.operation.duration", "relaybot.inbox.depth"} <= set(collector.metrics)


async def test_message_texts_are_exported_only_when_capture_content_is_on(tmp_path: Path, fake_llm: FakeLLM) -> None:
    collector = await run_turn_with_a_tool(tmp_path, fake_llm, capture=True)
    (tool,) = [span for span in collector.spans if span["name"] == "execute_tool write_file"]
    assert "secret plan" in tool["attributes"]["gen_ai.tool.call.arguments"]
    (turn,) = [span for span in collector.spans if span["name"] == "invoke_agent relaybot"]
    asked = json.loads(turn["attributes"]["gen_ai.input.messages"])
    assert asked == [{"role": "user", "parts": [{"type": "text", "content": "write it down"}]}]
    answered = json.loads(turn["attributes"]["gen_ai.output.messages"])  # a reply that did not stream, too
    assert answered == [{"role": "assistant", "parts": [{"type": "text", "content": "done"}]}]


def test_telemetry_costs_count_cached_tokens_as_the_ledger_does() -> None:
    cached = LLMCalled(ChatRef("telegram", "1"), "gpt-4o", 1000, 100, 0.5, cached_tokens=800)
    plain = LLMCalled(ChatRef("telegram", "1"), "gpt-4o", 1000, 100, 0.5)
    costs = CallCosts()
    assert costs.of(cached) == call_cost("gpt-4o", 1000, 100, 800)
    assert costs.of(cached) < costs.of(plain)  # type: ignore[operator]


async def test_log_lines_inside_a_turn_carry_its_trace_id(
    tmp_path: Path, fake_llm: FakeLLM, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO):  # caplog's handler is on the root logger, where the filter goes
        collector = await run_turn_with_a_tool(tmp_path, fake_llm, capture=False)
    trace_id = collector.spans[0]["trace_id"]
    turn_lines = [r.getMessage() for r in caplog.records if "turn answered" in r.getMessage()]
    assert turn_lines and all(f"trace_id={trace_id}" in line for line in turn_lines)


async def test_a_failed_model_call_is_a_span_with_an_error_status(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(Error(503, "overloaded"), Error(503, "overloaded"), Error(503, "overloaded"), Error(503, "over"))
    async with FakeCollector() as collector, Harness(tmp_path, fake_llm) as bot:
        config = TelemetryConfig(otlp_endpoint=collector.endpoint)
        telemetry = OtelTelemetry(bot.app.events, config, collector.endpoint, bot.app.bus.stats, export_interval=0.2)
        telemetry.start()
        await bot.ask("hello?")
        await telemetry.stop()
        await collector.wait_for(lambda: any(span["name"].startswith("chat") for span in collector.spans))
    (chat,) = [span for span in collector.spans if span["name"].startswith("chat")]
    assert chat["attributes"]["error.type"] == "ProviderUnavailable"
    assert chat["status"] == 2  # ERROR

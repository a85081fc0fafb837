"""OpenTelemetry over OTLP/HTTP, fed by the event bus: a trace per turn, GenAI spans per model and tool call, metrics.

Imported only when `telemetry.otlp_endpoint` (or OTEL_EXPORTER_OTLP_ENDPOINT) is set; needs `relaybot[otel]`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import TYPE_CHECKING, Any

from bot.bus.contract import BusStats
from bot.config.schema_ops import TelemetryConfig
from bot.events import Event, EventBus, LLMCalled, StreamDelta, ToolCalled, ToolFinished, TurnFinished, TurnStarted
from bot.telemetry.costs import CallCosts
from bot.telemetry.prometheus import BusStatsSource
from bot.telemetry.trace_ids import current_trace_id, install_log_filter, remove_log_filter

if TYPE_CHECKING:
    from opentelemetry.trace import Span

logger = logging.getLogger(__name__)

EXPORT_INTERVAL = 10.0  # seconds between metric exports
STATS_EVERY = 5.0  # seconds between reads of the bus's backlog
CONTENT_LIMIT = 4096


class OtelTelemetry:
    """Turns events into spans and metrics and exports both to `endpoint` (the collector's base URL)."""

    def __init__(
        self,
        events: EventBus,
        config: TelemetryConfig,
        endpoint: str,
        bus_stats: BusStatsSource,
        export_interval: float = EXPORT_INTERVAL,
    ) -> None:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        from bot import __version__

        base = endpoint.rstrip("/")
        resource = Resource.create({"service.name": config.service_name, "service.version": __version__})
        self._tracing = TracerProvider(resource=resource)
        self._tracing.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{base}/v1/traces")))
        reader = PeriodicExportingMetricReader(
            OTLPMetricExporter(endpoint=f"{base}/v1/metrics"), export_interval_millis=export_interval * 1000
        )
        self._metering = MeterProvider(resource=resource, metric_readers=[reader])
        self._tracer = self._tracing.get_tracer("relaybot")
        self._capture = config.capture_content
        self._events = events
        self._bus_stats = bus_stats
        self._stats = BusStats()
        self._costs = CallCosts()
        self._turns: dict[str, Span] = {}
        self._replies: dict[str, list[str]] = {}
        self._tools: dict[str, Span] = {}
        self._instruments = _Instruments(self._metering, self._current_stats)
        self._unsubscribe = lambda: None
        self._poller: asyncio.Task[None] | None = None
        self._log_filter = install_log_filter()
        logger.info("telemetry: exporting traces and metrics to %s", base)

    def start(self) -> None:
        """Listen to the event bus and read the bus's backlog in the background."""
        self._unsubscribe = self._events.subscribe(self._on_event)
        self._poller = asyncio.create_task(self._read_stats(), name="telemetry-bus-stats")

    async def stop(self) -> None:
        """Stop listening, end open spans, flush and shut the exporters down (in a thread: they block)."""
        self._unsubscribe()
        if self._poller is not None:
            self._poller.cancel()
            await asyncio.gather(self._poller, return_exceptions=True)
        for span in [*self._tools.values(), *self._turns.values()]:
            span.end()
        self._tools.clear()
        self._turns.clear()
        remove_log_filter(self._log_filter)
        await asyncio.to_thread(self._shutdown)

    def _shutdown(self) -> None:
        self._tracing.shutdown()
        self._metering.shutdown()

    def _current_stats(self) -> BusStats:
        return self._stats

    async def _read_stats(self) -> None:
        while True:
            try:
                self._stats = await self._bus_stats()
            except Exception:
                logger.exception("telemetry: could not read the bus's backlog")
            await asyncio.sleep(STATS_EVERY)

    def _on_event(self, event: Event) -> None:
        if isinstance(event, TurnStarted):
            self._turn_started(event)
        elif isinstance(event, TurnFinished):
            self._turn_finished(event)
        elif isinstance(event, LLMCalled):
            self._model_called(event)
        elif isinstance(event, ToolCalled):
            self._tool_called(event)
        elif isinstance(event, ToolFinished):
            self._tool_finished(event)
        elif isinstance(event, StreamDelta) and self._capture and event.session_key in self._replies:
            self._replies[event.session_key].append(event.text)

    def _turn_started(self, event: TurnStarted) -> None:
        span = self._tracer.start_span(
            "invoke_agent relaybot",
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "relaybot",
                "relaybot.session_key": event.session_key,
                "relaybot.turn_id": event.turn_id,
                "relaybot.channel": event.chat.channel,
            },
        )
        if self._capture and event.text:
            span.set_attribute("gen_ai.input.messages", _messages("user", event.text))
        self._turns[event.session_key] = span
        self._replies[event.session_key] = []
        # The event is emitted in the turn's own task: the trace id stays with that task's log lines.
        current_trace_id.set(format(span.get_span_context().trace_id, "032x"))

    def _turn_finished(self, event: TurnFinished) -> None:
        from opentelemetry.trace import Status, StatusCode

        self._instruments.turns.add(1, {"outcome": event.outcome})
        self._instruments.turn_seconds.record(event.duration, {"outcome": event.outcome})
        span = self._turns.pop(event.session_key, None)
        reply = "".join(self._replies.pop(event.session_key, [])) or event.text  # streamed, or sent whole
        if span is None:
            return
        span.set_attribute("relaybot.outcome", event.outcome)
        span.set_attribute("relaybot.iterations", event.iterations)
        if self._capture and reply:
            span.set_attribute("gen_ai.output.messages", _messages("assistant", reply))
        if event.outcome not in ("answered", "silent", "answered by message"):
            span.set_status(Status(StatusCode.ERROR, event.outcome))
        span.end()

    def _model_called(self, event: LLMCalled) -> None:
        from opentelemetry.trace import set_span_in_context

        cost = self._costs.of(event)
        labels = {"gen_ai.operation.name": "chat", "gen_ai.request.model": event.model}
        self._instruments.tokens.record(event.prompt_tokens, {**labels, "gen_ai.token.type": "input"})
        self._instruments.tokens.record(event.completion_tokens, {**labels, "gen_ai.token.type": "output"})
        self._instruments.call_seconds.record(event.duration, labels)
        if cost:
            self._instruments.cost.add(cost, {"gen_ai.request.model": event.model})
        parent = self._turns.get(event.session_key)
        end = time.time_ns()
        span = self._tracer.start_span(
            f"chat {event.model}",
            context=set_span_in_context(parent) if parent else None,
            start_time=end - int(event.duration * 1e9),
            attributes={
                **labels,
                "gen_ai.usage.input_tokens": event.prompt_tokens,
                "gen_ai.usage.output_tokens": event.completion_tokens,
                "gen_ai.usage.cache_read.input_tokens": event.cached_tokens,
                "relaybot.cost_usd": cost if cost is not None else 0.0,
            },
        )
        if event.outcome != "ok":
            from opentelemetry.trace import Status, StatusCode

            span.set_attribute("error.type", event.outcome)
            span.set_status(Status(StatusCode.ERROR, event.outcome))
        span.end(end_time=end)

    def _tool_called(self, event: ToolCalled) -> None:
        from opentelemetry.trace import set_span_in_context

        parent = self._turns.get(event.session_key)
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": event.tool,
            "gen_ai.tool.call.id": event.call_id,
        }
        if self._capture:
            attributes["gen_ai.tool.call.arguments"] = event.summary[:CONTENT_LIMIT]
        self._tools[event.call_id] = self._tracer.start_span(
            f"execute_tool {event.tool}", context=set_span_in_context(parent) if parent else None, attributes=attributes
        )

    def _tool_finished(self, event: ToolFinished) -> None:
        from opentelemetry.trace import Status, StatusCode

        self._instruments.tool_seconds.record(event.duration, {"gen_ai.tool.name": event.tool})
        span = self._tools.pop(event.call_id, None)
        if span is None:
            return
        if self._capture:
            span.set_attribute("gen_ai.tool.call.result", event.summary[:CONTENT_LIMIT])
        if event.is_error:
            span.set_status(Status(StatusCode.ERROR, "the tool reported an error"))
        span.end()


class _Instruments:
    """The metric instruments, GenAI names where the conventions have one."""

    def __init__(self, metering: Any, stats: Any) -> None:
        from opentelemetry.metrics import CallbackOptions, Observation

        meter = metering.get_meter("relaybot")
        self.turns = meter.create_counter("relaybot.turns", description="Turns finished, by outcome.")
        self.turn_seconds = meter.create_histogram("relaybot.turn.duration", unit="s", description="Turn duration.")
        self.tokens = meter.create_histogram(
            "gen_ai.client.token.usage", unit="{token}", description="Tokens per call."
        )
        self.call_seconds = meter.create_histogram(
            "gen_ai.client.operation.duration", unit="s", description="Model call duration."
        )
        self.cost = meter.create_counter("relaybot.cost", unit="USD", description="Cost of model calls.")
        self.tool_seconds = meter.create_histogram(
            "relaybot.tool.duration", unit="s", description="Tool call duration."
        )

        def gauge(field: str) -> Any:
            def observe(options: CallbackOptions) -> list[Observation]:
                return [Observation(getattr(stats(), field))]

            return [observe]

        meter.create_observable_gauge("relaybot.inbox.depth", gauge("inbound_pending"))
        meter.create_observable_gauge("relaybot.outbox.backlog", gauge("outbound_pending"))
        meter.create_observable_gauge("relaybot.ambiguous_sends", gauge("ambiguous_sends"))


def _messages(role: str, text: str) -> str:
    """One message in the GenAI conventions' JSON form (role and text parts), its text cut to CONTENT_LIMIT."""
    return json.dumps(
        [{"role": role, "parts": [{"type": "text", "content": text[:CONTENT_LIMIT]}]}], ensure_ascii=False
    )

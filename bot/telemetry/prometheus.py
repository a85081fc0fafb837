"""The figures /metrics serves in Prometheus text: turns, tokens, cost, latencies, and the bus's backlog."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from bot.bus.contract import BusStats
from bot.events import Event, EventBus, LLMCalled, ToolFinished, TurnFinished
from bot.telemetry.costs import CallCosts

BusStatsSource = Callable[[], Awaitable[BusStats]]
LATENCY_BUCKETS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)


class PrometheusFigures:
    """Counts what the event bus reports into its own registry; `render` adds the bus's backlog at scrape time."""

    def __init__(self, events: EventBus, bus_stats: BusStatsSource) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self._bus_stats = bus_stats
        self._costs = CallCosts()
        self.registry = registry = CollectorRegistry()
        self._turns = Counter("relaybot_turns", "Turns finished, by outcome.", ["outcome"], registry=registry)
        self._turn_seconds = Histogram(
            "relaybot_turn_seconds", "Turn duration.", buckets=LATENCY_BUCKETS, registry=registry
        )
        self._calls = Counter(
            "relaybot_llm_calls",
            "Model calls, by model and outcome (ok, or the failure).",
            ["model", "outcome"],
            registry=registry,
        )
        self._tokens = Counter(
            "relaybot_llm_tokens", "Tokens, by model and direction.", ["model", "type"], registry=registry
        )
        self._cost = Counter("relaybot_llm_cost_usd", "Cost of model calls in USD.", ["model"], registry=registry)
        self._call_seconds = Histogram(
            "relaybot_llm_call_seconds", "Model call duration.", ["model"], buckets=LATENCY_BUCKETS, registry=registry
        )
        self._tools = Counter(
            "relaybot_tool_calls", "Tool calls, by tool and outcome.", ["tool", "outcome"], registry=registry
        )
        self._tool_seconds = Histogram(
            "relaybot_tool_seconds", "Tool call duration.", ["tool"], buckets=LATENCY_BUCKETS, registry=registry
        )
        self._inbox = Gauge("relaybot_inbox_depth", "Inbound messages not finished yet.", registry=registry)
        self._outbox = Gauge("relaybot_outbox_backlog", "Replies not sent yet.", registry=registry)
        self._ambiguous = Gauge("relaybot_ambiguous_sends", "Sends that may have arrived twice.", registry=registry)
        self._dead = Gauge(
            "relaybot_dead_letters",
            "Messages (in) and replies (out) that failed for good and wait for `relaybot queue`.",
            ["direction"],
            registry=registry,
        )
        self.close = events.subscribe(self._on_event, TurnFinished, LLMCalled, ToolFinished)

    def _on_event(self, event: Event) -> None:
        if isinstance(event, TurnFinished):
            self._turns.labels(event.outcome).inc()
            self._turn_seconds.observe(event.duration)
        elif isinstance(event, LLMCalled):
            self._calls.labels(event.model, event.outcome).inc()
            self._tokens.labels(event.model, "input").inc(event.prompt_tokens)
            self._tokens.labels(event.model, "output").inc(event.completion_tokens)
            self._call_seconds.labels(event.model).observe(event.duration)
            cost = self._costs.of(event)
            if cost:
                self._cost.labels(event.model).inc(cost)
        elif isinstance(event, ToolFinished):
            self._tools.labels(event.tool, "error" if event.is_error else "ok").inc()
            self._tool_seconds.labels(event.tool).observe(event.duration)

    async def render(self) -> bytes:
        """Every figure in Prometheus text format, the backlog read from the bus now."""
        from prometheus_client import generate_latest

        stats = await self._bus_stats()
        self._inbox.set(stats.inbound_pending)
        self._outbox.set(stats.outbound_pending)
        self._ambiguous.set(stats.ambiguous_sends)
        self._dead.labels("in").set(stats.inbound_failed)
        self._dead.labels("out").set(stats.outbound_failed)
        return generate_latest(self.registry)

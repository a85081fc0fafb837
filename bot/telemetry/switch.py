"""Whether OpenTelemetry export is on, and starting it; nothing of the SDK is imported while it is off."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from bot.config.schema_ops import TelemetryConfig
from bot.errors import ConfigError
from bot.events import EventBus
from bot.telemetry.prometheus import BusStatsSource

if TYPE_CHECKING:
    from bot.telemetry.otel import OtelTelemetry

ENDPOINT_VARIABLE = "OTEL_EXPORTER_OTLP_ENDPOINT"


def otlp_endpoint(config: TelemetryConfig, env: dict[str, str] | None = None) -> str | None:
    """`telemetry.otlp_endpoint`, else OTEL_EXPORTER_OTLP_ENDPOINT; None when neither is set (telemetry off)."""
    environment = os.environ if env is None else env
    return config.otlp_endpoint or environment.get(ENDPOINT_VARIABLE) or None


def start_telemetry(config: TelemetryConfig, events: EventBus, bus_stats: BusStatsSource) -> OtelTelemetry | None:
    """Start exporting when an endpoint is set; ConfigError naming the key when the otel extra is missing."""
    endpoint = otlp_endpoint(config)
    if endpoint is None:
        return None
    try:
        from bot.telemetry.otel import OtelTelemetry
    except ImportError:
        raise ConfigError(
            "OpenTelemetry export needs the otel extra: pip install 'relaybot[otel]'", "telemetry.otlp_endpoint"
        ) from None
    telemetry = OtelTelemetry(events, config, endpoint, bus_stats)
    telemetry.start()
    return telemetry

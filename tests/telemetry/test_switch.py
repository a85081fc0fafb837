"""Telemetry is on only with an endpoint, from the config or OTEL_EXPORTER_OTLP_ENDPOINT; off, no SDK is imported."""

from __future__ import annotations

import subprocess
import sys

from bot.config.schema_ops import TelemetryConfig
from bot.telemetry.switch import otlp_endpoint


def test_endpoint_comes_from_the_config_then_the_standard_variable() -> None:
    variable = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}
    assert otlp_endpoint(TelemetryConfig(), {}) is None
    assert otlp_endpoint(TelemetryConfig(), variable) == "http://collector:4318"
    assert otlp_endpoint(TelemetryConfig(otlp_endpoint="http://mine:4318"), variable) == "http://mine:4318"


def test_switched_off_telemetry_imports_no_opentelemetry() -> None:
    code = (
        "import sys\n"
        "from bot.config.schema_ops import TelemetryConfig\n"
        "from bot.events import EventBus\n"
        "from bot.telemetry.switch import start_telemetry\n"
        "assert start_telemetry(TelemetryConfig(), EventBus(), None) is None\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    env = {"PATH": "/usr/bin:/bin"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert result.stdout.strip() == "[]"

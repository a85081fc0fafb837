"""The sections for running relaybot as a service: the health listener, telemetry, and how long state is kept."""

from __future__ import annotations

from pydantic import Field

from bot.config.durations import Duration
from bot.config.section import Section

DAY = 86400.0


class HealthConfig(Section):
    """/healthz, /readyz and /metrics on their own port when the API channel is off (null: no listener)."""

    port: int | None = Field(default=None, ge=0, le=65535)
    host: str = "127.0.0.1"


class TelemetryConfig(Section):
    """OpenTelemetry export over OTLP/HTTP; off unless an endpoint is set here or in OTEL_EXPORTER_OTLP_ENDPOINT."""

    otlp_endpoint: str | None = None
    capture_content: bool = False
    service_name: str = "relaybot"


class OpsConfig(Section):
    """What the bot tells its operator by itself."""

    dead_letter_notice: bool = True  # a DM to the owner, at most hourly, when messages or replies become dead letters


class RetentionConfig(Section):
    """How long finished state is kept; pruned once a day (null: forever)."""

    sessions: Duration | None = Field(default=365 * DAY, gt=0)
    ledger: Duration | None = Field(default=400 * DAY, gt=0)
    journal: Duration = Field(default=7 * DAY, gt=0)
    run_logs: Duration | None = Field(default=90 * DAY, gt=0)
    files: Duration | None = Field(default=90 * DAY, gt=0)  # what chats sent and what was made for them

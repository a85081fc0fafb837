"""Telemetry from the event bus: Prometheus figures for /metrics, OpenTelemetry traces and metrics over OTLP."""

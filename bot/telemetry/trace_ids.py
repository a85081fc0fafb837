"""The current turn's trace id, carried by every log line the turn writes while telemetry is on."""

from __future__ import annotations

import logging
from contextvars import ContextVar

current_trace_id: ContextVar[str | None] = ContextVar("relaybot_trace_id", default=None)


class TraceIdFilter(logging.Filter):
    """Appends ` trace_id=<32 hex>` to records written inside a traced turn."""

    def filter(self, record: logging.LogRecord) -> bool:
        trace_id = current_trace_id.get()
        if trace_id is not None and "trace_id=" not in record.getMessage():
            record.msg, record.args = f"{record.getMessage()} trace_id={trace_id}", None
        return True


def install_log_filter() -> TraceIdFilter:
    """Add the filter to every handler of the root logger; return it (for `remove_log_filter`)."""
    trace_filter = TraceIdFilter()
    for handler in logging.getLogger().handlers:
        handler.addFilter(trace_filter)
    return trace_filter


def remove_log_filter(trace_filter: TraceIdFilter) -> None:
    """Take the filter off the root logger's handlers again."""
    for handler in logging.getLogger().handlers:
        handler.removeFilter(trace_filter)

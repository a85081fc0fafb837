"""An OTLP/HTTP collector on 127.0.0.1: decodes the protobuf exports it receives and keeps the spans and metrics."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from tests.fakes.loopback import LoopbackServer


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


class FakeCollector(LoopbackServer):
    """Receives /v1/traces and /v1/metrics (application/x-protobuf) and answers as a collector does."""

    def __init__(self) -> None:
        super().__init__()
        self.spans: list[dict[str, Any]] = []
        self.metrics: dict[str, list[Any]] = {}
        self._changed = asyncio.Condition()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/traces", self._traces)
        app.router.add_post("/v1/metrics", self._metrics)

    async def wait_for(self, ready: Any, timeout: float = 20.0) -> None:
        """Return once `ready()` holds for what arrived."""
        async with asyncio.timeout(timeout), self._changed:
            await self._changed.wait_for(ready)

    async def _traces(self, request: web.Request) -> web.Response:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
            ExportTraceServiceResponse,
        )

        export = ExportTraceServiceRequest.FromString(await request.read())
        for resource in export.resource_spans:
            service = {a.key: _value(a.value) for a in resource.resource.attributes}
            for scope in resource.scope_spans:
                for span in scope.spans:
                    self.spans.append(
                        {
                            "name": span.name,
                            "trace_id": span.trace_id.hex(),
                            "span_id": span.span_id.hex(),
                            "parent_id": span.parent_span_id.hex(),
                            "attributes": {a.key: _value(a.value) for a in span.attributes},
                            "status": span.status.code,
                            "resource": service,
                        }
                    )
        async with self._changed:
            self._changed.notify_all()
        return self._answer(ExportTraceServiceResponse())

    async def _metrics(self, request: web.Request) -> web.Response:
        from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
            ExportMetricsServiceRequest,
            ExportMetricsServiceResponse,
        )

        export = ExportMetricsServiceRequest.FromString(await request.read())
        for resource in export.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    self.metrics.setdefault(metric.name, []).append(metric)
        async with self._changed:
            self._changed.notify_all()
        return self._answer(ExportMetricsServiceResponse())

    @staticmethod
    def _answer(message: Any) -> web.Response:
        return web.Response(body=message.SerializeToString(), content_type="application/x-protobuf")

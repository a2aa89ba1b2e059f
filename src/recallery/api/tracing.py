"""Optional OpenTelemetry traces: a span per HTTP request, with a child span per search leg
and model call (the :class:`~recallery.observe.Observer`'s timed steps).

Off unless the ``otel`` extra is installed (``pip install 'recallery[otel]'``) *and*
``RECALLERY_OTEL=1``; then spans go to an OTLP/HTTP collector configured by OpenTelemetry's
own variables (``OTEL_EXPORTER_OTLP_ENDPOINT``, ``OTEL_EXPORTER_OTLP_HEADERS``,
``OTEL_SERVICE_NAME``, ...). The app has its own tracer provider: the process's global one is
left alone.

A request span is named ``METHOD /route/{template}`` (never the path a caller sent, so no id
becomes a name) and carries only the method, the route template and the status; no span
carries query text, a memory's name or an id. The engine's spans have only their step's name
(``recallery.search.keyword``, ``recallery.model.embed``, ...). The PostgreSQL keyword leg and
a lone search's query embedding run on other threads, which start from a copy of the caller's
context (``contextvars``), so their spans are children of the request's too. An embedding
call that joins several searches' texts is a child of the search that ran it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

from recallery.api.health import PROBES
from recallery.api.measure import Measured, watch
from recallery.api.metrics import PATH as METRICS_PATH
from recallery.engine import Engine
from recallery.extras import require

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Tracer

NAME = "recallery"
OTLP_HTTP = "opentelemetry.exporter.otlp.proto.http"


def otlp_provider() -> TracerProvider:
    """A provider exporting in batches over OTLP/HTTP, configured from ``OTEL_*``."""
    require("opentelemetry.sdk", OTLP_HTTP, extra="otel", what="RECALLERY_OTEL=1 (traces)")
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    # Resource.create reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES over this default.
    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: NAME}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return provider


class StepTracer:
    """The engine's :class:`~recallery.observe.Tracer`: a span per step. An exception's
    message may quote a caller's text: no span records it (nor the request's)."""

    def __init__(self, tracer: Tracer) -> None:
        self.tracer = tracer

    def start_as_current_span(self, name: str) -> AbstractContextManager[Any]:
        return self.tracer.start_as_current_span(
            name, record_exception=False, set_status_on_exception=False
        )


class TraceRequests:
    """A :class:`~recallery.api.measure.Watcher`: one span per HTTP request (probes and
    ``/metrics`` excepted), current while the request runs, so the engine's spans become
    its children."""

    def __init__(self, tracer: Tracer) -> None:
        self.tracer = tracer

    def watch(self, request: Measured) -> AbstractContextManager[None] | None:
        if request.path in (METRICS_PATH, *PROBES):
            return None
        return self._traced(request)

    @contextmanager
    def _traced(self, request: Measured) -> Iterator[None]:
        from opentelemetry.trace import SpanKind, Status, StatusCode

        # The route is known only once the router has run: the span is renamed at the end.
        with self.tracer.start_as_current_span(
            request.method,
            kind=SpanKind.SERVER,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                yield
            finally:
                span.update_name(f"{request.method} {request.route}")
                attributes: dict[str, Any] = {
                    "http.request.method": request.method,
                    "http.route": request.route,
                    "http.response.status_code": request.status,
                }
                span.set_attributes(attributes)
                if request.status >= 500:
                    span.set_status(Status(StatusCode.ERROR))


def install_tracing(
    app: Any, engine: Engine, prefix: str, provider: TracerProvider | None = None
) -> TracerProvider:
    """Trace ``app``'s requests and ``engine``'s steps with ``provider`` (None: one exporting
    over OTLP, :func:`otlp_provider`); the provider, to shut down when the app stops."""
    provider = provider or otlp_provider()
    tracer = provider.get_tracer(NAME)
    engine.observer.tracer = StepTracer(tracer)
    app.state.tracer_provider = provider
    watch(app, TraceRequests(tracer), prefix)
    return provider


__all__ = ["StepTracer", "TraceRequests", "install_tracing", "otlp_provider"]

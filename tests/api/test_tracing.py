"""OpenTelemetry traces (the ``otel`` extra): a search over REST is one request span named by
its route template, with a child span per search leg and the query's embedding in the same
trace (on PostgreSQL the keyword leg runs on another thread), and no span's name or
attribute carries the query, the memory's name or an id. Off unless turned on."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest
from fastapi.testclient import TestClient
from tests.support.api import API, Account, add_turn, create_memory, ok

from recallery import Engine
from recallery.api import create_app
from recallery.api.app import PREFIX
from recallery.providers.batching import BatchingEmbedder
from recallery.providers.registry import ModelRegistry
from recallery.settings import Settings
from recallery.store.base import Store
from recallery.testing import DeterministicEmbedder, FrozenClock

memory_exporter = pytest.importorskip(
    "opentelemetry.sdk.trace.export.in_memory_span_exporter",
    reason="the otel extra is not installed",
)
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.trace import SpanKind  # noqa: E402

from recallery.api.tracing import StepTracer, install_tracing  # noqa: E402
from recallery.observe import Observer  # noqa: E402

LEGS = ("embed", "keyword", "gather", "rank")


@pytest.fixture
def batching(store: Store, clock: FrozenClock) -> Iterator[Engine]:
    """An engine whose embedder reports its model calls (``model.embed``)."""
    models = ModelRegistry(builtin=lambda: BatchingEmbedder(DeterministicEmbedder()))
    engine = Engine(store, models=models, clock=clock)
    yield engine
    engine.usage.close()
    engine.request_recorder.close()


def test_a_search_is_a_request_span_with_its_legs_and_no_text(
    batching: Engine, admin: Account
) -> None:
    exporter = memory_exporter.InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    app = create_app(batching)
    install_tracing(app, batching, PREFIX, provider)
    with TestClient(app, headers={"Authorization": f"Bearer {admin.key}"}) as api:
        memory = create_memory(api, name="secret-garden")
        add_turn(api, memory["id"], "zanzibar marmalade")
        exporter.clear()
        params = {"query": "zanzibar marmalade", "memory_id": memory["id"]}
        assert ok(api.get(f"{API}/messages/search", params=params))
    spans = exporter.get_finished_spans()
    requests = [s for s in spans if s.kind is SpanKind.SERVER]
    assert [s.name for s in requests] == ["GET /api/v1/messages/search"]
    request = requests[0]
    assert request.attributes == {
        "http.request.method": "GET",
        "http.route": "/api/v1/messages/search",
        "http.response.status_code": 200,
    }
    trace = request.context.trace_id
    by_name = {s.name: s for s in spans}
    for leg in LEGS:
        span = by_name[f"recallery.search.{leg}"]
        assert span.parent is not None and span.parent.span_id == request.context.span_id, leg
        assert span.context.trace_id == trace, leg
    assert by_name["recallery.model.embed"].context.trace_id == trace  # on another thread
    assert {s.context.trace_id for s in spans} == {trace}
    for text in ("zanzibar", "marmalade", "secret-garden", memory["id"]):
        assert text not in _everything(spans), text


def test_a_path_with_an_id_is_named_by_its_template(engine: Engine, admin: Account) -> None:
    exporter = memory_exporter.InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    app = create_app(engine)
    install_tracing(app, engine, PREFIX, provider)
    with TestClient(app, headers={"Authorization": f"Bearer {admin.key}"}) as api:
        memory = create_memory(api, name="secret-garden")
        exporter.clear()
        ok(api.get(f"{API}/memories/{memory['id']}/config"))
        assert api.get(f"{API}/memories/no-such-memory/config").status_code == 404
        api.get("/healthz")
    names = [s.name for s in exporter.get_finished_spans() if s.kind is SpanKind.SERVER]
    assert names == ["GET /api/v1/memories/{memory_id}/config"] * 2
    assert memory["id"] not in _everything(exporter.get_finished_spans())


def test_a_failed_step_is_a_span_without_the_error_text() -> None:
    exporter = memory_exporter.InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    observer = Observer()
    observer.tracer = StepTracer(provider.get_tracer("test"))
    with pytest.raises(ValueError, match="zanzibar"), observer.timed("model.chat"):
        raise ValueError("the model said zanzibar")
    (span,) = exporter.get_finished_spans()
    assert span.name == "recallery.model.chat"
    assert not span.events
    assert "zanzibar" not in _everything((span,)) + str(span.status.description)


def test_off_unless_turned_on(engine: Engine) -> None:
    assert Settings.from_env({}).otel is False
    assert Settings.from_env({"RECALLERY_OTEL": "1"}).otel is True
    app = create_app(engine)
    assert engine.observer.tracer is None
    assert not hasattr(app.state, "tracer_provider")


def test_turned_on_exports_over_otlp(engine: Engine) -> None:
    app = create_app(engine, replace(engine.settings, otel=True))
    provider = app.state.tracer_provider
    try:
        assert isinstance(provider, TracerProvider)
        assert engine.observer.tracer is not None
    finally:
        provider.shutdown()


def _everything(spans: tuple[ReadableSpan, ...]) -> str:
    """Every span's name, attributes and events as one text."""
    parts: list[str] = []
    for span in spans:
        parts.append(span.name)
        parts.extend(f"{k}={v}" for k, v in (span.attributes or {}).items())
        for event in span.events:
            parts.append(event.name)
            parts.extend(f"{k}={v}" for k, v in (event.attributes or {}).items())
    return "\n".join(parts)

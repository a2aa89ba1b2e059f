"""``/metrics`` in Prometheus' text format (``prometheus_client``), for an administrator.

What it counts: requests by method, route *template* (``/api/v1/memories/{memory_id}``, never
the path a caller sent, so neither ids nor text become labels) and status, with a latency
histogram per method and route; what the engine reports of its own work
(:mod:`recallery.api.observed`: search legs, model calls, embedding batches, job runs,
warm-up); and, read from the store at each scrape, entries by state
and type, tombstones, jobs by state and outcome, memories. Every label value comes from a
fixed set (HTTP methods and statuses, the app's route templates, the entry states, types,
job states and outcomes): no memory name, id or user text ever labels a series.

``RECALLERY_METRICS`` chooses who may read it: ``admin`` (the default: ``Authorization:
Bearer <admin key>``, an administrator's unscoped key with every capability; wrong keys count
against their address as on REST), ``open`` (anyone who can reach the port: for a Prometheus on a
private network) or ``off`` (no route at all).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import Collector
from starlette.concurrency import run_in_threadpool

from recallery.api.health import PROBES
from recallery.api.measure import UNMATCHED, Measured, route_template, watch
from recallery.api.observed import ObservedSeries
from recallery.engine import Engine
from recallery.errors import Forbidden, Throttled, Unauthorized
from recallery.models import ALL_CAPABILITIES, Principal
from recallery.services.stats import StoreCounts as Counts
from recallery.web.edge.guard import authenticate, bearer_key, refusal
from recallery.wire.envelope import failure

PATH = "/metrics"
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Metrics:
    """The app's own registry (one per app: two apps in a process never share counters)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "recallery_http_requests",
            "HTTP requests answered, by method, route template and status.",
            ("method", "route", "status"),
            registry=self.registry,
        )
        self.latency = Histogram(
            "recallery_http_request_duration_seconds",
            "Time from a request's arrival to the end of its answer.",
            ("method", "route"),
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        self.requests.labels(method, route, str(status)).inc()
        self.latency.labels(method, route).observe(seconds)


class CountRequests:
    """A :class:`~recallery.api.measure.Watcher`: every HTTP request but the probes and
    ``/metrics`` itself into :class:`Metrics`, labelled by its route's template."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def watch(self, request: Measured) -> AbstractContextManager[None] | None:
        if request.path in (PATH, *PROBES):
            return None
        return self._counted(request)

    @contextmanager
    def _counted(self, request: Measured) -> Iterator[None]:
        try:
            yield
        finally:
            method = request.method if request.method in _METHODS else "other"
            self.metrics.observe(method, request.route, request.status, request.seconds)


_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


class StoreCounts(Collector):
    """The store's counts (:meth:`Engine.store_counts`) as gauges, for one scrape."""

    def __init__(self, counts: Counts) -> None:
        self.counts = counts

    def collect(self) -> Iterator[GaugeMetricFamily]:
        entries = GaugeMetricFamily(
            "recallery_entries", "Entries held, by state and type.", labels=("state", "type")
        )
        for (state, kind), n in sorted(self.counts.entries.items()):
            entries.add_metric((state, kind), n)
        jobs = GaugeMetricFamily(
            "recallery_jobs", "Jobs, by state and outcome.", labels=("state", "outcome")
        )
        for (state, outcome), n in sorted(self.counts.jobs.items()):
            jobs.add_metric((state, outcome), n)
        yield entries
        yield jobs
        tombstones = self.counts.tombstones
        yield GaugeMetricFamily("recallery_tombstones", "Erased entries.", value=tombstones)
        yield GaugeMetricFamily("recallery_memories", "Memories.", value=self.counts.memories)
        yield GaugeMetricFamily(
            "recallery_stored_bytes",
            "Bytes the memories' entries take, as their budgets count them.",
            value=self.counts.stored_bytes,
        )


def install_metrics(app: FastAPI, engine: Engine, access: str, prefix: str) -> None:
    """``/metrics`` and the request counting, unless ``access`` is ``off``; ``prefix``: the
    one the API's routers are included under."""
    if access == "off":
        return
    metrics = Metrics()
    app.state.metrics = metrics
    if engine is not None:  # an app built for its OpenAPI schema alone has no engine
        engine.observer.listen(ObservedSeries(metrics.registry))
    watch(app, CountRequests(metrics), prefix)

    @app.get(PATH, include_in_schema=False)
    async def scrape(request: Request) -> Response:
        actor = None
        if access != "open":
            try:
                actor = await _admin(engine, request)
            except Throttled as exc:
                return refusal(exc)
            except Unauthorized as exc:  # not RAGFlow's route: its own words, not RAGFlow's
                body = failure(401, exc.message, {"error": exc.code})
                return JSONResponse(body, 401, headers={"WWW-Authenticate": "Bearer"})
        return await run_in_threadpool(_scrape, engine, metrics, actor)


def _scrape(engine: Engine, metrics: Metrics, actor: Principal | None) -> Response:
    """The scrape, as ``actor`` (None: open metrics, as the administrator)."""
    if actor is None:
        actor = engine.principal(engine.ensure_admin(None, create_key=False)[0].id)
    store = CollectorRegistry()
    store.register(StoreCounts(engine.store_counts(actor)))
    text = generate_latest(metrics.registry) + generate_latest(store)
    return Response(text, media_type=CONTENT_TYPE_LATEST)


async def _admin(engine: Engine, request: Request) -> Principal:
    """The caller, if an administrator's unscoped key with every capability: what the
    store's counts cover (every tenant) is what only such a key may read elsewhere."""
    try:
        key = bearer_key(request.headers.get("authorization", ""))
    except Unauthorized:
        raise Unauthorized("Missing API key: /metrics needs an administrator's key.") from None
    actor = await authenticate(request.scope, engine, key)
    if not actor.is_admin:
        raise Forbidden("/metrics is for administrators (RECALLERY_METRICS=open opens it).")
    if actor.scope is not None or not actor.capabilities >= ALL_CAPABILITIES:
        raise Forbidden(
            "/metrics needs an administrator's unscoped key with every capability "
            "(read, write, manage); this key is scoped or limited."
        )
    return actor


__all__ = ["UNMATCHED", "CountRequests", "Metrics", "install_metrics", "route_template"]

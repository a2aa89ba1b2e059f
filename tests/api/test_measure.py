"""One ASGI wrapper measures each HTTP request once for metrics, the request log and traces:
each watcher's context is entered before the app runs and left once the request has been
answered, with the status, the route *template* and the time final; a watcher that declines
a request is never entered; a failing app reads as 500 to every watcher. In the app, the
request counters and the request log read the same measurement."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

import pytest
from fastapi import FastAPI, HTTPException
from fastapi.testclient import TestClient
from tests.support.api import API, Account, create_memory, metric_value, ok, ok_text

from recallery import Engine
from recallery.api import create_app
from recallery.api.measure import UNMATCHED, Measured, MeasureRequests, watch


class Seen:
    """A watcher noting what it saw of each request on entering and on leaving."""

    def __init__(self, skip: str = "") -> None:
        self.skip = skip
        self.entered: list[tuple[str, int, str]] = []
        self.left: list[tuple[str, int, str, float]] = []

    def watch(self, request: Measured) -> AbstractContextManager[None] | None:
        return None if request.path == self.skip else self._seen(request)

    @contextmanager
    def _seen(self, request: Measured) -> Iterator[None]:
        self.entered.append((request.path, request.status, request.route))
        try:
            yield
        finally:
            self.left.append((request.path, request.status, request.route, request.seconds))


def _app(*watchers: Seen) -> FastAPI:
    app = FastAPI()

    @app.get("/items/{item_id}")
    def item(item_id: str) -> dict[str, str]:
        if item_id == "missing":
            raise HTTPException(404, "no such item")
        if item_id == "broken":
            raise RuntimeError("a bug")
        return {"id": item_id}

    @app.get("/healthz")
    def health() -> dict[str, bool]:
        return {"ok": True}

    for watcher in watchers:
        watch(app, watcher, "/api")
    return app


def test_each_watcher_sees_one_measurement_once_answered() -> None:
    first, second = Seen(), Seen(skip="/healthz")
    app = _app(first, second)
    wrappers = [m for m in app.user_middleware if m.cls is MeasureRequests]
    assert len(wrappers) == 1  # two watchers, one wrapper
    client = TestClient(app, raise_server_exceptions=False)
    assert client.get("/items/Берлин").status_code == 200
    assert client.get("/items/missing").status_code == 404
    assert client.get("/items/broken").status_code == 500
    assert client.get("/nowhere/北京").status_code == 404
    assert client.get("/healthz").status_code == 200
    template = "/items/{item_id}"
    # entered before the app ran: nothing known yet
    assert first.entered == [
        ("/items/Берлин", 500, UNMATCHED),
        ("/items/missing", 500, UNMATCHED),
        ("/items/broken", 500, UNMATCHED),
        ("/nowhere/北京", 500, UNMATCHED),
        ("/healthz", 500, UNMATCHED),
    ]
    # left once answered: the status sent (500 for a failure) and the template, never the path
    assert [seen[:3] for seen in first.left] == [
        ("/items/Берлин", 200, template),
        ("/items/missing", 404, template),
        ("/items/broken", 500, template),
        ("/nowhere/北京", 404, UNMATCHED),
        ("/healthz", 200, "/healthz"),
    ]
    assert all(seen[3] > 0 for seen in first.left)
    # the second watcher declined /healthz: never entered; the rest it saw exactly as the first
    assert second.left == first.left[:4]


def test_an_app_with_no_watcher_has_no_wrapper() -> None:
    app = _app()
    assert not [m for m in app.user_middleware if m.cls is MeasureRequests]
    assert TestClient(app).get("/items/x").json() == {"id": "x"}


@pytest.mark.parametrize("path", ["/memories/{memory}/config", "/memories/no-such/config"])
def test_the_counters_and_the_request_log_read_one_measurement(
    engine: Engine, admin: Account, path: str
) -> None:
    app = create_app(engine)
    assert len([m for m in app.user_middleware if m.cls is MeasureRequests]) == 1
    with TestClient(app, headers={"Authorization": f"Bearer {admin.key}"}) as api:
        memory = create_memory(api, name="Заметки 笔记")
        url = API + path.format(memory=memory["id"])
        status = api.get(url).status_code
        metrics = ok_text(api)
        engine.request_recorder.flush()
        route = f"{API}/memories/{{memory_id}}/config"
        (row,) = ok(api.get(f"{API}/admin/requests", params={"route": route}))["requests"]
    assert row["status"] == status
    labels = ('method="GET"', f'route="{route}"')
    counted = metric_value(metrics, "recallery_http_requests_total", *labels, f'status="{status}"')
    assert counted == 1
    seconds = metric_value(metrics, "recallery_http_request_duration_seconds_sum", *labels)
    assert row["latency_ms"] == pytest.approx(seconds * 1000, abs=0.0006)  # the same timing

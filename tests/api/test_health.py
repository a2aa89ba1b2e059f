"""The probes: /healthz answers while the process runs; /readyz only once the store
answers at the current schema, the indexes are built and the worker (where there is one)
is alive. Neither needs a key. And ``serve --log-format json`` writes JSON lines."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable

from fastapi import FastAPI
from fastapi.testclient import TestClient

from recallery import Engine
from recallery.api.logs import JsonLines, PathOnly, log_config


def test_healthz_answers_without_a_key(http: Callable[[str | None], TestClient]) -> None:
    response = http(None).get("/healthz")
    assert (response.status_code, response.json()) == (200, {"status": "ok"})


def test_readyz_waits_for_the_indexes_and_a_live_worker(
    app: FastAPI, engine: Engine, http: Callable[[str | None], TestClient]
) -> None:
    probe = http(None)
    building = probe.get("/readyz")
    assert building.status_code == 503
    assert building.json()["checks"]["indexes"] == "building"
    assert building.json()["checks"]["store"] == "ok"
    app.state.readiness.warm(engine)
    ready = probe.get("/readyz")
    assert (ready.status_code, ready.json()["status"]) == (200, "ready")
    assert ready.json()["checks"]["worker"] == "not run in this process"
    stopped = threading.Thread(target=lambda: None)
    stopped.start()
    stopped.join()
    app.state.readiness.worker = stopped
    dead = probe.get("/readyz")
    assert (dead.status_code, dead.json()["checks"]["worker"]) == (503, "stopped")


def test_readyz_names_a_store_behind_the_schema(
    app: FastAPI, engine: Engine, http: Callable[[str | None], TestClient]
) -> None:
    app.state.readiness.warm(engine)
    engine.store.latest_schema = engine.store.schema_version() + 1  # a newer recallery
    response = http(None).get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["migrations"].startswith("schema ")


def test_json_lines_keep_the_access_path_without_its_query() -> None:
    config = log_config(json_lines=True)
    assert set(config["formatters"]) == {"json"}
    record = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5", "GET", "/api/v1/messages/search?query=secret", "1.1", 200),
        None,
    )
    PathOnly().filter(record)
    line = json.loads(JsonLines().format(record))
    assert (line["path"], line["status"], line["level"]) == ("/api/v1/messages/search", 200, "info")
    assert "secret" not in json.dumps(line)

"""The app as a whole: OpenAPI and docs, the one error mapping, the admin bootstrap, and a core
that imports no web framework."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from tests.support.api import API, Account, error

from recallery import Engine

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_openapi_and_interactive_docs_are_served(http: Callable[[str | None], TestClient]) -> None:
    client = http(None)
    schema = client.get("/openapi.json").json()
    assert schema["info"]["title"] == "recallery"
    assert "HTTPBearer" in schema["components"]["securitySchemes"]
    assert "swagger" in client.get("/docs").text.lower()


def test_docs_list_every_route(app: FastAPI) -> None:
    """docs/api.md names every operation of the OpenAPI schema (method and path)."""
    text = (DOCS / "api.md").read_text()
    for path, operations in app.openapi()["paths"].items():
        short = path.removeprefix(API)
        for method in operations:
            pattern = rf"`[^`]*{method.upper()} {re.escape(short)}`"
            assert re.search(pattern, text), f"{method.upper()} {short} is not in docs/api.md"


def test_routing_errors_use_the_envelope(as_alice: TestClient) -> None:
    assert error(as_alice.get(f"{API}/nowhere"), 404, 404) == "Not Found"
    assert error(as_alice.patch(f"{API}/memories"), 405, 405) == "Method Not Allowed"


def test_a_body_that_is_not_an_object_names_the_problem(as_alice: TestClient) -> None:
    response = as_alice.post(f"{API}/memories", json=["not", "an", "object"])
    assert error(response, 400, 101).startswith("body: ")
    response = as_alice.post(
        f"{API}/memories", content=b"{broken", headers={"Content-Type": "application/json"}
    )
    assert error(response, 400, 101)


def test_a_bug_answers_code_100_with_its_repr(
    app: FastAPI, engine: Engine, alice: Account, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(engine, "list_memories", broken)
    client = TestClient(app, raise_server_exceptions=False)
    response = client.get(f"{API}/memories", headers={"Authorization": f"Bearer {alice.key}"})
    assert error(response, 500, 100) == "RuntimeError('boom')"


def test_admin_bootstrap_creates_one_admin_and_shows_its_key_once(engine: Engine) -> None:
    admin, key = engine.ensure_admin()
    assert admin.is_admin and key is not None
    assert engine.authenticate(key).user_id == admin.id
    again, none = engine.ensure_admin()
    assert (again, none) == (admin, None)
    same, _ = engine.ensure_admin("chosen-admin-key")
    assert same == admin and engine.authenticate("chosen-admin-key").is_admin


def test_a_chosen_admin_key_on_an_empty_store(engine: Engine) -> None:
    admin, shown = engine.ensure_admin("from-the-environment")
    assert shown is None
    assert engine.authenticate("from-the-environment").user_id == admin.id


def test_the_core_imports_no_web_framework() -> None:
    code = (
        "import sys, recallery, recallery.engine, recallery.wire, recallery.wire.transfer\n"
        "web = {'fastapi', 'starlette', 'click', 'uvicorn', 'httpx', 'pydantic'}\n"
        "bad = web & set(sys.modules)\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)

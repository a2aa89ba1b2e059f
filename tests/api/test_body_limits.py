"""The guard before every route: a request without a valid key is refused before its body is
read, and no body past its limit is ever read in full (HTTP 413, code 101, field ``body``).

The app is driven as raw ASGI so the test sees exactly which body chunks were read."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from tests.support.api import API, Account, create_memory, error, ok

from recallery import Engine
from recallery.api import create_app
from recallery.settings import Settings

LIMIT = 4_000
IMPORT_LIMIT = 40_000
CHUNK = 1_000


@pytest.fixture
def small(engine: Engine) -> FastAPI:
    """The app with small limits, so the tests send little."""
    return create_app(engine, Settings(max_body_bytes=LIMIT, max_import_bytes=IMPORT_LIMIT))


@dataclass
class Sent:
    """What one raw ASGI request got back, and how many body chunks the app read."""

    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    chunks_read: int = 0

    def json(self) -> Any:
        import json

        return json.loads(self.body)


def send(
    app: FastAPI,
    method: str,
    path: str,
    chunks: Iterator[bytes],
    headers: dict[str, str] | None = None,
) -> Sent:
    """One request whose body arrives chunk by chunk, as a server passes a chunked one on."""
    sent = Sent()
    pending = list(chunks)
    headers = {"Transfer-Encoding": "chunked", **(headers or {})}
    if "Content-Length" in headers:
        del headers["Transfer-Encoding"]
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        "client": ("127.0.0.1", 1234),
        "server": ("testserver", 80),
    }

    async def receive() -> dict[str, Any]:
        if not pending:
            return {"type": "http.disconnect"}
        sent.chunks_read += 1
        body = pending.pop(0)
        return {"type": "http.request", "body": body, "more_body": bool(pending)}

    async def reply(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            sent.status = message["status"]
            sent.headers = {k.decode(): v.decode() for k, v in message["headers"]}
        elif message["type"] == "http.response.body":
            sent.body += message.get("body", b"")

    anyio.run(app, scope, receive, reply)  # type: ignore[arg-type]
    return sent


def body(size: int) -> Iterator[bytes]:
    """``size`` bytes of a JSON object, in chunks of 1,000 bytes."""
    text = b'{"name": "' + b"x" * (size - 12) + b'"}'
    return iter([text[i : i + CHUNK] for i in range(0, len(text), CHUNK)])


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Basic abc"}, {"Authorization": "Bearer "}, bearer("not-a-key")],
    ids=["no header", "not bearer", "empty key", "unknown key"],
)
def test_a_request_without_a_valid_key_is_refused_before_its_body_is_read(
    small: FastAPI, headers: dict[str, str]
) -> None:
    sent = send(small, "POST", f"{API}/memories", body(10 * LIMIT), headers)
    assert (sent.status, sent.json()["code"]) == (401, 401)
    assert sent.chunks_read == 0
    assert sent.headers["connection"] == "close"


def test_a_declared_length_over_the_limit_is_refused_unread(small: FastAPI, alice: Account) -> None:
    headers = {**bearer(alice.key), "Content-Length": str(10 * LIMIT)}
    sent = send(small, "POST", f"{API}/memories", body(10 * LIMIT), headers)
    assert sent.status == 413 and sent.chunks_read == 0
    envelope = sent.json()
    assert envelope["code"] == 101
    assert envelope["data"] == {"error": "invalid_input", "field": "body"}
    assert f"{LIMIT} bytes" in envelope["message"]
    assert sent.headers["connection"] == "close"


def test_a_streamed_body_is_counted_and_refused_once_past_the_limit(
    small: FastAPI, alice: Account
) -> None:
    sent = send(small, "POST", f"{API}/memories", body(100 * LIMIT), bearer(alice.key))
    assert (sent.status, sent.json()["code"], sent.json()["data"]["field"]) == (413, 101, "body")
    assert sent.chunks_read == LIMIT // CHUNK + 1  # never more than the limit and one chunk


def test_a_body_within_the_limit_reaches_the_route(small: FastAPI, alice: Account) -> None:
    sent = send(small, "POST", f"{API}/memories", body(LIMIT), bearer(alice.key))
    assert sent.status == 400  # the route ran: the four required fields are missing
    assert "required argument are missing" in sent.json()["message"]


def test_imports_have_the_larger_limit(
    small: FastAPI, http: Callable[[str | None], TestClient], alice: Account
) -> None:
    memory = create_memory(http(alice.key), "target")
    jsonl = {**bearer(alice.key), "Content-Type": "application/x-ndjson"}
    for path in (f"{API}/memories/import", f"{API}/memories/{memory['id']}/import"):
        within = send(small, "POST", path, body(IMPORT_LIMIT // 2), jsonl)
        assert within.status == 400 and within.json()["data"]["field"] != "body", within.body
        over = send(small, "POST", path, body(2 * IMPORT_LIMIT), jsonl)
        assert (over.status, over.json()["data"]["field"]) == (413, "body")
        assert f"{IMPORT_LIMIT} bytes" in over.json()["message"]
    assert send(small, "POST", f"{API}/memories", body(IMPORT_LIMIT // 2), jsonl).status == 413


def test_the_default_limits_come_from_the_settings() -> None:
    assert (Settings().max_body_bytes, Settings().max_import_bytes) == (2**20, 64 * 2**20)
    env = {"RECALLERY_MAX_BODY_BYTES": "10", "RECALLERY_MAX_IMPORT_BYTES": "20"}
    read = Settings.from_env(env)
    assert (read.max_body_bytes, read.max_import_bytes) == (10, 20)


def test_routes_without_a_key_and_unknown_paths_pass_the_guard(
    small: FastAPI, as_alice: TestClient, alice: Account
) -> None:
    health = send(small, "GET", f"{API}/health", iter([b""]))
    assert health.status == 200
    assert error(as_alice.get(f"{API}/nowhere"), 404, 404) == "Not Found"
    response = as_alice.patch(f"{API}/memories")
    assert error(response, 405, 405) == "Method Not Allowed"
    assert response.headers["allow"] == "GET, POST"
    assert ok(as_alice.get(f"{API}/users/me"))["id"] == alice.id

"""Every web form route under hostile bodies (issue 41): random form fields, wrong content
types, bytes that are not UTF-8, fields over the body limit and multipart where no form takes a
file never make the server answer 5xx; and a body over the limit is refused while it streams,
so the server never holds more of it than the limit allows."""

from __future__ import annotations

import tracemalloc
from collections.abc import AsyncIterator, Iterable, Iterator, MutableMapping
from typing import Any
from urllib.parse import quote_from_bytes

import anyio
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.web import Login, form_token

from recallery import Engine, Memory, Principal

CONTENT_TYPES = [
    "application/x-www-form-urlencoded",
    "application/x-www-form-urlencoded; charset=latin-1",
    "application/x-www-form-urlencoded; charset=no-such-charset",
    "multipart/form-data; boundary=xyz",
    "multipart/form-data",
    "application/json",
    "text/plain",
    "application/octet-stream",
    "",
]


def web_posts(app: FastAPI) -> list[str]:
    """The path templates of the web UI's form routes (inside included routers too)."""

    def walk(routes: Iterable[Any], prefix: str) -> Iterator[tuple[str, APIRoute]]:
        for r in routes:
            if isinstance(r, APIRoute):
                yield prefix + r.path, r
            elif (inner := getattr(r, "original_router", None)) is not None:
                context = getattr(r, "include_context", None)
                yield from walk(inner.routes, prefix + getattr(context, "prefix", ""))

    paths = {
        path
        for path, r in walk(app.routes, "")
        if "POST" in (r.methods or ()) and not path.startswith(("/api/", "/mcp"))
    }
    return sorted(paths)


@pytest.fixture
def fuzz(
    engine: Engine, alice: Principal, bob: Principal, alice_key: str, notes: Memory
) -> dict[str, str]:
    """Real values for every path parameter, so a body reaches the route's own checks."""
    (entry,) = engine.add_turn(alice, [notes.id], user_input="I live in Lyon", agent_response="ok")
    other_key, _ = engine.create_api_key(alice, alice.user_id, name="spare")
    return {
        "memory_id": notes.id,
        "message_id": str(entry.message_id),
        "key_id": other_key,  # never the key the browser logged in with
        "user_id": bob.user_id,
        "tenant_id": "t-nowhere",
        "value": "u-1",
    }


def filled(template: str, values: dict[str, str]) -> str:
    path = template
    for name, value in values.items():
        path = path.replace(f"{{{name}:path}}", value).replace(f"{{{name}}}", value)
    assert "{" not in path, f"no value for a parameter of {template}"
    return path


field_names = st.sampled_from(["csrf", "key", "next", "name", "content", "action", "text"])
field_texts = st.text(max_size=40) | st.sampled_from(["", "0", "-1", "9" * 30, "null", "\x00"])
forms = st.dictionaries(field_names | st.text(min_size=1, max_size=12), field_texts, max_size=6)


@st.composite
def bodies(draw: st.DrawFn, token: str) -> tuple[bytes, str]:
    """A body and its content type: a form (with or without the page's CSRF token) encoded
    as UTF-8, raw bytes (often not UTF-8), or a form with one field past the body limit."""
    kind = draw(st.sampled_from(["form", "bytes", "huge"]))
    content_type = draw(st.sampled_from(CONTENT_TYPES))
    if kind == "bytes":
        return draw(st.binary(max_size=300)), content_type
    fields = draw(forms)
    if draw(st.booleans()):
        fields["csrf"] = token
    pairs = [(k.encode(), v.encode()) for k, v in fields.items()]
    if draw(st.booleans()):
        pairs.append((b"text", draw(st.binary(min_size=1, max_size=20))))  # invalid UTF-8
    if kind == "huge":
        pairs.append((b"content", b"x" * (1024 * 1024 + 1)))
    body = b"&".join(quote_from_bytes(k).encode() + b"=" + quote_from_bytes(v).encode()
                     for k, v in pairs)  # fmt: skip
    return body, content_type


@pytest.fixture
def browser(login: Login, alice_key: str) -> TestClient:
    """Alice, logged in once for all of a test's examples."""
    return login(alice_key)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_no_web_form_route_answers_5xx_to_a_hostile_body(
    data: st.DataObject,
    app: FastAPI,
    browser: TestClient,
    client: TestClient,
    notes: Memory,
    fuzz: dict[str, str],
) -> None:
    routes = web_posts(app)
    assert len(routes) >= 20, routes  # the form routes are found, not silently none
    token = form_token(browser.get(f"/memories/{notes.id}/config").text)
    template = data.draw(st.sampled_from(routes), label="route")
    body, content_type = data.draw(bodies(token), label="body")
    # logging out would end the session the other examples post with: a stranger posts there
    poster = client if template == "/logout" else browser
    headers = {"content-type": content_type} if content_type else {}
    answer = poster.post(filled(template, fuzz), content=body, headers=headers)
    assert answer.status_code < 500, (template, content_type, body[:200], answer.text[:500])


async def _post_streamed(app: FastAPI, path: str, total: int) -> tuple[int, int]:
    """Post ``total`` bytes to ``path`` in 64 KiB chunks with no Content-Length (so nothing
    can refuse it by its declared size): the status and how many bytes the app pulled."""
    chunk = b"k=" + b"x" * (65536 - 2)
    pulled = 0
    sent: list[dict[str, object]] = []

    async def chunks() -> AsyncIterator[dict[str, object]]:
        nonlocal pulled
        while pulled < total:
            pulled += len(chunk)
            yield {"type": "http.request", "body": chunk, "more_body": pulled < total}
        while True:
            yield {"type": "http.disconnect"}

    stream = chunks()

    async def receive() -> dict[str, object]:
        return await anext(stream)

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(dict(message))

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [
            (b"host", b"testserver"),
            (b"content-type", b"application/x-www-form-urlencoded"),
            (b"transfer-encoding", b"chunked"),
        ],
        "client": ("198.51.100.9", 5000),
        "server": ("testserver", 80),
        "state": {},
    }
    with anyio.fail_after(30):
        await app(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    status = start["status"]
    assert isinstance(status, int)
    return status, pulled


@pytest.mark.parametrize("path", ["/login", "/memories", "/account/keys", "/logout"])
def test_a_streamed_body_over_the_limit_never_grows_memory_past_the_limit(
    app: FastAPI, engine: Engine, path: str
) -> None:
    limit = engine.settings.max_body_bytes
    total = 16 * limit  # 16 MiB at the default limit
    tracemalloc.start()
    try:
        status, pulled = anyio.run(_post_streamed, app, path, total)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert status in (403, 413), status  # refused (by its size, or its missing cookie first)
    assert pulled <= limit + 2 * 65536  # it stopped reading past the limit
    assert peak < 3 * limit, f"peak {peak / 2**20:.1f} MiB for a {limit / 2**20:.0f} MiB limit"

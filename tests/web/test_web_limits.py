"""Hostile bodies and key guessing at every address (defects 1 and 6 of round 3): a body is
limited before its route reads a byte, multipart only where a form takes a file, the login
form checks its cookie and the address's failures before reading the body, and failed
authentications from one address are slowed with a clear 429."""

from __future__ import annotations

import anyio
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from tests.support.web import Login, form_token, login_token

from recallery import Engine, Memory, Principal
from recallery.web.edge.throttle import LIMIT

HUGE = 200 * 1024 * 1024


async def _answer_without_body(app: FastAPI, path: str, headers: dict[str, str]) -> int:
    """The status the app answers for a request that declares ``HUGE`` bytes and never sends
    one: it must answer at once, not wait for the body."""
    sent: list[dict[str, object]] = []
    never = anyio.Event()

    async def receive() -> dict[str, object]:
        await never.wait()  # the body never comes
        return {"type": "http.disconnect"}

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    raw = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
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
        "headers": [(b"host", b"testserver"), (b"content-length", str(HUGE).encode()), *raw],
        "client": ("198.51.100.7", 5000),
        "server": ("testserver", 80),
        "state": {},
    }
    with anyio.fail_after(5):
        await app(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    status = start["status"]
    assert isinstance(status, int)
    return status


@pytest.mark.parametrize(
    "path", ["/login", "/memories", "/memories/abc/bulk", "/mcp", "/account/keys"]
)
def test_a_huge_declared_body_is_refused_at_once(app: FastAPI, path: str) -> None:
    form = {"content-type": "application/x-www-form-urlencoded"}
    assert anyio.run(_answer_without_body, app, path, form) == 413


def test_a_body_over_the_limit_is_refused_while_it_streams(
    client: TestClient, engine: Engine
) -> None:
    limit = engine.settings.max_body_bytes

    def chunks() -> object:
        for _ in range(limit // 65536 + 2):
            yield b"k=" + b"x" * 65534

    answer = client.post(
        "/login",
        content=chunks(),  # chunked: no Content-Length to refuse by
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert answer.status_code == 413 and "limit" in answer.text


def test_multipart_is_refused_where_no_form_takes_a_file(
    login: Login, alice_key: str, notes: Memory
) -> None:
    browser = login(alice_key)
    token = form_token(browser.get(f"/memories/{notes.id}/config").text)
    files = {"file": ("big.bin", b"x" * 1000, "application/octet-stream")}
    refused = browser.post("/memories", data={"csrf": token, "name": "x"}, files=files)
    assert refused.status_code == 415 and "no file uploads" in refused.text
    fine = browser.post(f"/memories/{notes.id}/import", data={"csrf": token}, files=files)
    assert fine.status_code == 400  # the import form takes a file: the file itself is wrong


def test_login_without_its_cookie_is_refused_before_the_body(client: TestClient) -> None:
    answer = client.post("/login", data={"csrf": "x", "key": "rc-guess"})
    assert answer.status_code == 403


def test_failed_logins_from_one_address_are_slowed_but_a_valid_key_logs_in(
    client: TestClient, app: FastAPI, alice_key: str
) -> None:
    for _ in range(LIMIT):
        wrong = client.post("/login", data={"csrf": login_token(client), "key": "rc-guess"})
        assert wrong.status_code == 401
    slowed = client.post("/login", data={"csrf": login_token(client), "key": "rc-guess"})
    assert slowed.status_code == 429 and int(slowed.headers["retry-after"]) > 0
    assert "Too many failed" in slowed.text
    fine = client.post("/login", data={"csrf": login_token(client), "key": alice_key})
    assert fine.status_code == 303  # a valid key is never refused for its address's failures
    with TestClient(app, follow_redirects=False, client=("203.0.113.9", 1)) as elsewhere:
        wrong = elsewhere.post("/login", data={"csrf": login_token(elsewhere), "key": "rc-x"})
        assert wrong.status_code == 401  # another address is not slowed


def test_failed_bearer_keys_are_slowed_with_the_envelope(
    client: TestClient, alice_key: str
) -> None:
    for _ in range(LIMIT):
        wrong = client.get("/api/v1/memories", headers={"Authorization": "Bearer rc-guess"})
        assert wrong.status_code == 401
    slowed = client.get("/api/v1/memories", headers={"Authorization": "Bearer rc-guess"})
    assert slowed.status_code == 429 and int(slowed.headers["retry-after"]) > 0
    body = slowed.json()
    assert (body["code"], body["data"]["error"]) == (429, "throttled")
    fine = client.get("/api/v1/memories", headers={"Authorization": f"Bearer {alice_key}"})
    assert fine.status_code == 200


def test_a_short_admin_key_is_warned_about_loudly(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    with pytest.warns(UserWarning, match="only 5 characters"):
        engine.ensure_admin("admin")
    assert "RECALLERY_ADMIN_API_KEY" in caplog.text
    engine.ensure_admin("k" * 32)  # long enough: no warning is recorded as an error here


def test_the_review_fragment_shows_no_content_to_a_key_without_read(
    login: Login, engine: Engine, alice: Principal, notes: Memory
) -> None:
    (raw,) = engine.add_turn(
        alice, [notes.id], user_input="the vault code is 4471", agent_response="ok"
    )
    _, manager = engine.create_api_key(alice, alice.user_id, capabilities=["manage"])
    browser = login(manager)
    token = form_token(browser.get("/account").text)
    answer = browser.post(
        f"/memories/{notes.id}/entries/{raw.message_id}/review",
        data={"verdict": "confirmed", "csrf": token},
        headers={"HX-Request": "true"},
    )
    assert answer.status_code == 200 and "4471" not in answer.text
    assert "withheld" in answer.text

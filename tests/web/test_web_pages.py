"""The web UI without a browser: sessions, CSRF, headers, the same permission checks as the
API, stored text shown as text, and each form's no-script path (the browser tests drive the
same pages through Chromium)."""

from __future__ import annotations

import re
import sys
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from tests.support.web import Login, form_token, login_token

from recallery import Engine, Memory, Principal, SearchRequest
from recallery.models import EntryType
from recallery.requests import Bucket, Timeline
from recallery.web.chart import chart
from recallery.web.session import LOGIN_COOKIE, SESSION_COOKIE


def turn(engine: Engine, actor: Principal, memory: Memory, text: str, **kw: object) -> int:
    (e,) = engine.add_turn(actor, [memory.id], user_input=text, agent_response="ok", **kw)
    return e.message_id


def found(engine: Engine, actor: Principal, memory: Memory, query: str) -> set[int]:
    request = SearchRequest(query, (memory.id,), similarity_threshold=0.0, top_n=50)
    return {h.entry.message_id for h in engine.search(actor, request)}


# --- sessions and login ---------------------------------------------------------------------


def test_a_logged_out_browser_is_sent_to_the_login_page(client: TestClient, notes: Memory) -> None:
    assert client.get("/").headers["location"] == "/login"
    answer = client.get(f"/memories/{notes.id}/messages?page=2")
    assert answer.status_code == 303
    assert (
        answer.headers["location"] == f"/login?next=%2Fmemories%2F{notes.id}%2Fmessages%3Fpage%3D2"
    )
    assert client.post(f"/memories/{notes.id}/delete").headers["location"].startswith("/login")


def test_login_needs_its_form_token_and_a_live_key(
    client: TestClient, alice_key: str, engine: Engine, alice: Principal
) -> None:
    refused = client.post("/login", data={"key": alice_key})
    assert refused.status_code == 403 and SESSION_COOKIE not in refused.cookies
    token = login_token(client)
    wrong = client.post("/login", data={"csrf": token, "key": "rc-nope"})
    assert wrong.status_code == 401 and "not valid" in wrong.text
    assert SESSION_COOKIE not in client.cookies
    ok = client.post("/login", data={"csrf": login_token(client), "key": alice_key, "next": "/"})
    assert ok.status_code == 303 and ok.headers["location"] == "/"
    cookie = ok.headers["set-cookie"]
    assert f"{SESSION_COOKIE}=" in cookie and "HttpOnly" in cookie
    assert "SameSite=strict" in cookie or "samesite=strict" in cookie.lower()
    assert alice_key not in cookie
    assert client.get("/").status_code == 200


def test_login_only_sends_people_to_this_site(client: TestClient, alice_key: str) -> None:
    for target, landed in (
        ("//evil.example/x", "/"),
        ("https://evil.example", "/"),
        ("/audit", "/audit"),
    ):
        client.cookies.clear()
        token = login_token(client)
        answer = client.post("/login", data={"csrf": token, "key": alice_key, "next": target})
        assert answer.headers["location"] == landed


def test_a_tampered_or_unknown_cookie_is_refused(login: Login, alice_key: str) -> None:
    browser = login(alice_key)
    value = browser.cookies[SESSION_COOKIE]
    head, _, signature = value.rpartition(".")
    # the first character: every one of its six bits is the signature's (the last one's low
    # bits are base64 padding, so changing it may change nothing)
    forged = ("A" if signature[0] != "A" else "B") + signature[1:]
    for bad in (f"{head}.{forged}", "x" + value, "not-a-session"):
        browser.cookies.clear()
        browser.cookies.set(SESSION_COOKIE, bad)
        assert browser.get("/").headers["location"] == "/login"
    browser.cookies.clear()
    browser.cookies.set(SESSION_COOKIE, value)
    assert browser.get("/").status_code == 200


def test_logout_needs_the_token_and_ends_the_session(login: Login, alice_key: str) -> None:
    browser = login(alice_key)
    page = browser.get("/")
    assert browser.post("/logout").status_code == 403
    assert browser.get("/").status_code == 200
    out = browser.post("/logout", data={"csrf": form_token(page.text)})
    assert out.headers["location"] == "/login"
    assert browser.get("/account").status_code == 303


def test_a_revoked_key_ends_its_sessions(
    login: Login, engine: Engine, alice: Principal, alice_key: str
) -> None:
    browser = login(alice_key)
    assert browser.get("/").status_code == 200
    (key,) = [k for k in engine.list_api_keys(alice, alice.user_id) if k.name == "alice"]
    engine.revoke_api_key(alice, alice.user_id, key.id)
    assert browser.get("/").headers["location"] == "/login"


# --- CSRF and headers -----------------------------------------------------------------------


def test_a_post_without_the_csrf_token_changes_nothing(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    eid = turn(engine, alice, notes, "a fact about tea")
    browser = login(alice_key)
    token = form_token(browser.get(f"/memories/{notes.id}/messages").text)
    url = f"/memories/{notes.id}/entries/{eid}/forget"
    for data, headers in (({}, {}), ({"csrf": "forged"}, {}), ({}, {"X-CSRF-Token": "forged"})):
        answer = browser.post(url, data=data, headers=headers)
        assert answer.status_code == 403 and "expired" in answer.text
    assert found(engine, alice, notes, "tea") == {eid}
    assert engine.audit_log(alice, memory_id=notes.id, action="entry.forget").total == 0
    assert browser.post(url, headers={"X-CSRF-Token": token}).status_code == 303
    assert found(engine, alice, notes, "tea") == set()


def test_every_page_is_sent_with_the_security_headers_and_no_inline_script(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    eid = turn(engine, alice, notes, "headers")
    browser = login(alice_key)
    for url in (
        "/",
        f"/memories/{notes.id}",
        f"/memories/{notes.id}/messages",
        f"/memories/{notes.id}/entries/{eid}",
        f"/memories/{notes.id}/review",
        f"/memories/{notes.id}/jobs",
        f"/memories/{notes.id}/config",
        f"/search?memory={notes.id}&q=headers",
        "/audit",
        "/account",
        "/login",
        f"/memories/{'0' * 32}",
    ):
        answer = browser.get(url)
        csp = answer.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp, url
        assert "unsafe-inline" not in csp
        assert answer.headers["cache-control"] == "no-store", url
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert re.findall(r"<script(?![^>]*\ssrc=)", answer.text) == [], url
        assert re.findall(r"\son[a-z]+=|\sstyle=", answer.text) == [], url
    assert browser.get(f"/memories/{'0' * 32}").status_code == 404


# --- the same checks as the API -------------------------------------------------------------


def test_a_scoped_key_sees_only_its_memories(
    login: Login, engine: Engine, alice: Principal, notes: Memory
) -> None:
    other = engine.create_memory(
        alice, name="private diary", memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z"
    )
    secret = turn(engine, alice, other, "a secret plan")
    _, key = engine.create_api_key(alice, alice.user_id, scope=[notes.id])
    browser = login(key)
    listing = browser.get("/").text
    assert "notes" in listing and "private diary" not in listing
    for url in (
        f"/memories/{other.id}",
        f"/memories/{other.id}/messages",
        f"/memories/{other.id}/entries/{secret}",
        f"/memories/{other.id}/config",
        f"/memories/{other.id}/export",
        f"/audit?memory={other.id}",
    ):
        answer = browser.get(url)
        assert answer.status_code == 404, url
        assert "a secret plan" not in answer.text
    token = form_token(browser.get(f"/memories/{notes.id}/messages").text)
    refused = browser.post(f"/memories/{other.id}/entries/{secret}/forget", data={"csrf": token})
    assert refused.status_code == 404
    assert found(engine, alice, other, "secret") == {secret}
    assert "private diary" not in browser.get("/audit").text
    assert "scoped" in browser.get("/account").text.lower()


def test_stored_html_is_shown_as_text(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    hostile = '<script>alert("x")</script><b onclick="steal()">bold</b>'
    eid = turn(engine, alice, notes, hostile, user_id='"><img src=x>')
    browser = login(alice_key)
    for url in (f"/memories/{notes.id}/messages", f"/memories/{notes.id}/entries/{eid}"):
        text = browser.get(url).text
        assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in text
        assert (
            "<script>alert" not in text and "<b onclick" not in text and "<img src=x>" not in text
        )


# --- forms, without script ------------------------------------------------------------------


def test_the_create_form_shows_the_engines_error_beside_its_field(
    login: Login, alice_key: str, engine: Engine, alice: Principal
) -> None:
    browser = login(alice_key)
    token = form_token(browser.get("/").text)
    base = {"csrf": token, "embd_id": "x@Builtin", "llm_id": "y@Z"}
    blank = browser.post("/memories", data={**base, "name": "   "})
    assert blank.status_code == 400
    assert re.search(
        r'name="name"[^>]*></label>\s*<span class="field-error"[^>]*>Memory name cannot',
        blank.text,
    )
    big = browser.post("/memories", data={**base, "name": "ok", "memory_size": "99999999999"})
    assert big.status_code == 400 and "Memory size should be in range" in big.text
    assert engine.list_memories(alice).total == 0
    made = browser.post("/memories", data={**base, "name": "journal", "memory_type": "semantic"})
    (memory,) = engine.list_memories(alice).items
    assert made.headers["location"] == f"/memories/{memory.id}"
    assert memory.memory_types == (EntryType.RAW, EntryType.SEMANTIC)


def test_the_create_form_offers_both_local_embedding_models(login: Login, alice_key: str) -> None:
    page = login(alice_key).get("/").text
    assert re.search(r'name="embd_id"[^>]*list="offered-models"', page)
    offered = re.search(r'<datalist id="offered-models">(.*?)</datalist>', page)
    assert offered is not None
    assert re.findall(r'value="([^"]+)"', offered.group(1)) == [
        "all-MiniLM-L6-v2@Builtin",
        "multilingual-e5-small@Builtin",
    ]
    # the form's default is a model the list names (and says what it is)
    default = re.search(r'name="embd_id"[^>]*value="([^"]+)"', page) or re.search(
        r'value="([^"]+)"[^>]*name="embd_id"', page
    )
    assert default is not None and default.group(1) == "all-MiniLM-L6-v2@Builtin"


def test_configuration_locks_model_and_types_once_entries_exist(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    browser = login(alice_key)
    page = browser.get(f"/memories/{notes.id}/config").text
    assert not re.search(r'name="embd_id"[^>]*disabled', page) and "Locked" not in page
    turn(engine, alice, notes, "now it holds entries")
    page = browser.get(f"/memories/{notes.id}/config").text
    assert re.search(r'name="embd_id"[^>]*disabled', page) and "Locked: the memory holds 1" in page
    data = {
        "csrf": form_token(page),
        "name": "renamed",
        "embd_id": "other@Builtin",
        "memory_size": "4096",
        "temperature": "0.3",
        "permissions": "me",
        "forgetting_policy": "LRU",
        "llm_id": "y@Z",
    }
    assert browser.post(f"/memories/{notes.id}/config", data=data).status_code == 303
    saved = engine.get_memory(alice, notes.id)
    assert (saved.name, saved.embd_id, saved.memory_size, saved.forgetting_policy.value) == (
        "renamed",
        "x@Builtin",
        4096,
        "LRU",
    )
    bad = browser.post(f"/memories/{notes.id}/config", data={**data, "temperature": "hot"})
    assert bad.status_code == 400 and "Temperature should be in range" in bad.text


def test_erase_asks_for_the_id_then_shows_the_receipt(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    eid = turn(engine, alice, notes, "erase me please")
    browser = login(alice_key)
    token = form_token(browser.get(f"/memories/{notes.id}/entries/{eid}").text)
    url = f"/memories/{notes.id}/entries/{eid}/erase"
    wrong = browser.post(url, data={"csrf": token, "confirm": "1234", "reason": "asked"})
    assert wrong.status_code == 400 and f"Type {eid} to confirm" in wrong.text
    assert found(engine, alice, notes, "erase") == {eid}
    done = browser.post(url, data={"csrf": token, "confirm": str(eid), "reason": "asked"})
    assert done.status_code == 303  # so reloading the receipt does not post again
    assert done.headers["location"] == f"/memories/{notes.id}/entries/{eid}"
    for n in range(2):  # the receipt, then the same again on reload
        receipt = browser.get(done.headers["location"])
        assert receipt.status_code == 404 and f"Entry {eid} was erased" in receipt.text
        assert re.search(rf'id="erased-ids">{eid}<', receipt.text)
        assert re.search(r'id="erased-reason">asked<', receipt.text)
        assert ("Erased 1 entry: only tombstones remain." in receipt.text) == (n == 0)
    assert found(engine, alice, notes, "erase") == set()
    erasures = engine.audit_log(alice, memory_id=notes.id, action="entry.erase").items
    assert [e.message_id for e in erasures] == [eid]


def test_bulk_previews_then_applies_without_script(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    trip = [turn(engine, alice, notes, f"porto {i}", session_id="trip") for i in range(3)]
    home = turn(engine, alice, notes, "porto home", session_id="home")
    browser = login(alice_key)
    token = form_token(browser.get(f"/memories/{notes.id}/messages?session=trip").text)
    form = {"csrf": token, "action": "forget", "scope": "all", "f_session": "trip", "dry_run": "1"}
    preview = browser.post(f"/memories/{notes.id}/bulk", data=form)
    assert preview.status_code == 200 and "Forget 3 entries?" in preview.text
    assert found(engine, alice, notes, "porto") == {*trip, home}
    done = browser.post(f"/memories/{notes.id}/bulk", data={**form, "dry_run": "0"})
    assert done.status_code == 303
    assert found(engine, alice, notes, "porto") == {home}
    after = browser.get(done.headers["location"]).text
    assert "forget: 3 selected" in after
    # the bulk form keeps the action and reason chosen, for the next selection
    assert '<option value="forget" selected>' in after
    assert '<option value="disable" selected>' not in after


def test_applying_after_the_memory_changed_previews_again_saying_what_moved(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    trip = [turn(engine, alice, notes, f"lisbon {i}", session_id="trip") for i in range(3)]
    browser = login(alice_key)
    token = form_token(browser.get(f"/memories/{notes.id}/messages?session=trip").text)
    form = {"csrf": token, "action": "forget", "scope": "all", "f_session": "trip", "dry_run": "1"}
    preview = browser.post(f"/memories/{notes.id}/bulk", data=form)
    sent = dict(re.findall(r'name="(token|previewed_\w+)" value="([^"]*)"', preview.text))
    late = turn(engine, alice, notes, "lisbon late", session_id="trip")
    moved = browser.post(f"/memories/{notes.id}/bulk", data={**form, **sent, "dry_run": "0"})
    assert moved.status_code == 409
    assert "Then 3 selected and 3 to change; now 4 selected and 4 to change" in moved.text
    assert found(engine, alice, notes, "lisbon") == {*trip, late}  # nothing applied
    again = dict(re.findall(r'name="(token|previewed_\w+)" value="([^"]*)"', moved.text))
    done = browser.post(f"/memories/{notes.id}/bulk", data={**form, **again, "dry_run": "0"})
    assert done.status_code == 303
    assert found(engine, alice, notes, "lisbon") == set()


def test_the_bulk_form_keeps_the_reason_chosen(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    one = turn(engine, alice, notes, "a turn to confirm")
    browser = login(alice_key)
    token = form_token(browser.get(f"/memories/{notes.id}/messages").text)
    form = {"csrf": token, "action": "confirm", "ids": str(one), "reason": "checked by hand"}
    done = browser.post(f"/memories/{notes.id}/bulk", data={**form, "dry_run": "1"})
    assert done.status_code == 200
    page = browser.get(f"/memories/{notes.id}/messages").text
    assert '<option value="confirm" selected>' in page
    assert 'name="reason" value="checked by hand"' in page


def test_export_downloads_and_import_uploads(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    turn(engine, alice, notes, "kept across the move")
    browser = login(alice_key)
    exported = browser.get(f"/memories/{notes.id}/export")
    assert exported.headers["content-type"].startswith("application/x-ndjson")
    assert "kept across the move" in exported.text
    other = engine.create_memory(
        alice, name="copy", memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z"
    )
    token = form_token(browser.get(f"/memories/{other.id}/config").text)
    upload = {"file": ("m.jsonl", exported.content, "application/x-ndjson")}
    page = browser.post(f"/memories/{other.id}/import", data={"csrf": token}, files=upload)
    assert page.status_code == 200 and "Imported 1 turn" in page.text
    assert found(engine, alice, other, "move") != set()
    bad = browser.post(
        f"/memories/{other.id}/import", data={"csrf": token}, files={"file": ("x", b"{oops", "")}
    )
    assert bad.status_code == 400 and "not valid JSON" in bad.text


def test_delete_is_the_owners_and_needs_the_name(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    browser = login(alice_key)
    token = form_token(browser.get(f"/memories/{notes.id}/delete").text)
    url = f"/memories/{notes.id}/delete"
    assert browser.post(url, data={"csrf": token, "confirm": "nope"}).status_code == 400
    assert engine.list_memories(alice).total == 1
    assert browser.post(url, data={"csrf": token, "confirm": "notes"}).status_code == 303
    assert engine.list_memories(alice).total == 0


def test_the_chart_stacks_counts_by_type() -> None:
    from datetime import UTC, datetime, timedelta

    day = datetime(2026, 1, 1, tzinfo=UTC)
    t = Timeline(
        Bucket.DAY,
        (day, day + timedelta(days=1)),
        {EntryType.RAW: (2, 0), EntryType.SEMANTIC: (2, 1)},
    )
    c = chart(t, "m1")
    assert (c.top, c.total, c.first, c.last) == (4, 5, "2026-01-01", "2026-01-02")
    assert c.bars[0].href == (
        "/memories/m1/messages?recorded_since=2026-01-01T00%3A00%3A00%2B00%3A00"
        "&recorded_before=2026-01-02T00%3A00%3A00%2B00%3A00"
    )
    raw, semantic, later = c.bars
    assert (raw.kind, semantic.kind, later.kind) == ("raw", "semantic", "semantic")
    assert raw.height == pytest.approx(semantic.height) == pytest.approx(2 * later.height)
    assert semantic.y + semantic.height == pytest.approx(raw.y)  # stacked on top
    assert later.x > raw.x and LOGIN_COOKIE


def test_the_timeline_by_valid_time_links_each_bar_to_its_turns(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    """A turn sent with a conversation time three days back is counted on that day by valid
    time (on today by record time), and its bar opens the Messages page of that day's turns:
    it, and not the turn of today."""
    now = engine.clock.now()
    old = turn(engine, alice, notes, "the old move", conversation_time=now - timedelta(days=3))
    new = turn(engine, alice, notes, "the new move")
    browser = login(alice_key)
    by_record = engine.timeline(alice, notes.id, bucket="day", buckets=5)
    by_valid = engine.timeline(alice, notes.id, bucket="day", buckets=5, clock="valid")
    assert by_record.totals == (0, 0, 0, 0, 2)
    assert by_valid.totals == (0, 1, 0, 0, 1)
    page = browser.get(f"/memories/{notes.id}?clock=valid").text
    links = re.findall(r'<a href="(/memories/[^"]+/messages\?valid_since=[^"]+)"', page)
    assert len(links) == 2
    listed = browser.get(links[0].replace("&amp;", "&")).text
    assert f'name="ids" value="{old}"' in listed
    assert f'name="ids" value="{new}"' not in listed
    assert 'id="span-shown"' in listed


@pytest.mark.parametrize("module", ["jinja2", "itsdangerous", "python_multipart"])
def test_without_the_server_extra_the_web_ui_says_what_to_install(
    module: str, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fastapi import FastAPI

    from recallery import web
    from recallery.errors import MissingExtra

    monkeypatch.setitem(sys.modules, module, None)
    app = FastAPI()
    app.state.engine = engine
    with pytest.raises(MissingExtra) as raised:
        web.install(app)
    assert str(raised.value) == (
        'the web UI needs the server extra: pip install ".[server]" in a clone of recallery '
        "(it is not on PyPI yet)"
    )
    assert raised.value.name == module

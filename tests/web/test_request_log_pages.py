"""The request log in the web UI: an entry's page says how often it was read, by which keys
and when last, from the log; the page views themselves are logged under the viewer's key."""

from __future__ import annotations

from collections.abc import Callable

from fastapi.testclient import TestClient

from recallery import Engine, Memory, Principal
from recallery.requestlog import Call, RequestQuery, begin
from recallery.requests import SearchRequest


def test_an_entry_page_shows_its_reads_and_is_logged(
    engine: Engine,
    alice: Principal,
    alice_key: str,
    notes: Memory,
    login: Callable[[str], TestClient],
) -> None:
    (entry,) = engine.add_turn(alice, [notes.id], user_input="zanzibar", agent_response="ok")
    for _ in range(2):
        call = Call(channel="rest", route="/api/v1/messages/search", key_id="key-7")
        call.user_id = alice.user_id
        with begin(call):
            engine.search(alice, SearchRequest(query="zanzibar", memory_ids=(notes.id,)))
        engine.log_request(call, 200, 1.0)
    engine.request_log.flush()
    browser = login(alice_key)
    html = browser.get(f"/memories/{notes.id}/entries/{entry.message_id}").text
    assert "Read 2 times (2 returned by a search or context" in html
    assert "key-7" in html
    engine.request_log.flush()
    rows, _ = engine.requests(
        alice, RequestQuery(route="/memories/{memory_id}/entries/{message_id}")
    )
    assert rows and rows[0].channel == "web" and rows[0].key_id and rows[0].user_id == alice.user_id
    assert rows[0].entry_ids == (entry.message_id,)


def test_the_requests_page_filters_and_shows_only_one_s_own_calls(
    engine: Engine,
    alice: Principal,
    alice_key: str,
    notes: Memory,
    login: Callable[[str], TestClient],
) -> None:
    for route, status, user in (("/a", 200, alice.user_id), ("/b", 404, alice.user_id)):
        engine.log_request(Call(channel="rest", route=route, user_id=user), status, 5.0)
    engine.log_request(Call(channel="rest", route="/theirs", user_id="someone-else"), 200, 900.0)
    engine.request_log.flush()
    browser = login(alice_key)
    shown = browser.get("/requests").text
    assert "<code>/a</code>" in shown and "<code>/b</code>" in shown
    assert "/theirs" not in shown  # seeded: another user's call
    only_404 = browser.get("/requests", params={"status": "404"}).text
    assert "<code>/b</code>" in only_404 and "<code>/a</code>" not in only_404
    refused = browser.get("/requests", params={"slow": "fast"})
    assert refused.status_code == 400 and "slow" in refused.text


def test_the_requests_page_needs_a_key_that_may_read(
    engine: Engine, alice: Principal, login: Callable[[str], TestClient]
) -> None:
    engine.log_request(Call(channel="rest", route="/mine", user_id=alice.user_id), 200, 5.0)
    engine.request_log.flush()
    _, writer = engine.create_api_key(alice, alice.user_id, capabilities=["write"])
    refused = login(writer).get("/requests")
    assert refused.status_code == 403 and "&#39;read&#39; capability" in refused.text
    assert "/mine" not in refused.text

"""The request log in the web UI: an entry's page says how often it was read, by which keys
and when last, from the log; the page views themselves are logged under the viewer's key."""

from __future__ import annotations

from collections.abc import Callable

from fastapi.testclient import TestClient
from tests.support.web import form_token

from recallery import Engine, Memory, Principal
from recallery.requests import SearchRequest
from recallery.requests.requestlog import Call, RequestQuery, begin


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
    engine.request_recorder.flush()
    browser = login(alice_key)
    html = browser.get(f"/memories/{notes.id}/entries/{entry.message_id}").text
    assert "Read 2 times (2 returned by a search or context" in html
    assert "key-7" in html
    engine.request_recorder.flush()
    rows, _ = engine.request_log(
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
    engine.request_recorder.flush()
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
    engine.request_recorder.flush()
    _, writer = engine.create_api_key(alice, alice.user_id, capabilities=["write"])
    refused = login(writer).get("/requests")
    assert refused.status_code == 403 and "&#39;read&#39; capability" in refused.text
    assert "/mine" not in refused.text


# --- who and what, by name (issue 54 item 5) ---------------------------------------------------


def test_the_request_log_names_keys_users_and_memories_and_links_them(
    engine: Engine,
    alice: Principal,
    bob: Principal,
    login: Callable[[str], TestClient],
) -> None:
    root = engine.principal(engine.create_user("root", admin=True).id)
    _, root_key = engine.create_api_key(root, root.user_id, name="root console")
    bobs, _ = engine.create_api_key(bob, bob.user_id, name="бот поддержки")
    alices, _ = engine.create_api_key(alice, alice.user_id, name="alice-private-key")
    kept = engine.create_memory(
        bob, name="заметки 笔记", memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z"
    )
    doomed = engine.create_memory(
        bob, name="old", memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z"
    )
    for key, user, route in ((bobs, bob, "/bob"), (alices, alice, "/alice")):
        call = Call(channel="rest", route=route, key_id=key, user_id=user.user_id)
        call.memory_ids.update({kept.id, doomed.id} if user is bob else set())
        engine.log_request(call, 200, 5.0)
    engine.delete_memory(bob, doomed.id)
    engine.request_recorder.flush()

    shown = login(root_key).get("/requests").text
    row = shown.split("<code>/bob</code>")[1].split("</tr>")[0]
    at = f"/users/{bob.user_id}/keys"
    assert f'<a href="{at}#key-{bobs}" title="key {bobs}">бот поддержки</a>' in row
    assert f'<a href="{at}" title="user {bob.user_id}: their keys">bob</a>' in row
    # bob's private memory: an administrator reads the log, not the memory: no name, the id
    unread = f'<a href="/memories/{kept.id}" title="memory {kept.id}"><code>{kept.id[:8]}…'
    assert unread in row and "заметки" not in shown
    assert f"<code>{bobs}</code>" not in shown and f"<code>{bob.user_id}</code>" not in shown
    assert "alice-private-key" in shown  # an administrator sees every caller's key by name

    _, bob_key = engine.create_api_key(bob, bob.user_id, name="bob's browser")
    own = login(bob_key).get("/requests").text
    row = own.split("<code>/bob</code>")[1].split("</tr>")[0]
    assert f'<a href="/account#key-{bobs}" title="key {bobs}">бот поддержки</a>' in row
    assert f'<a href="/memories/{kept.id}" title="memory {kept.id}">заметки 笔记</a>' in row
    gone = f'<a href="/memories/{doomed.id}" title="memory {doomed.id}"><code>{doomed.id[:8]}…'
    assert gone in row  # its name is gone with it; the whole id is on hover
    assert "alice-private-key" not in own and "/alice" not in own  # seeded: not bob's calls


def test_a_user_s_keys_page_lists_them_for_an_admin_only_and_revokes(
    engine: Engine,
    alice: Principal,
    bob: Principal,
    login: Callable[[str], TestClient],
) -> None:
    root = engine.principal(engine.create_user("root", admin=True).id)
    _, root_key = engine.create_api_key(root, root.user_id, name="root console")
    bobs, _ = engine.create_api_key(bob, bob.user_id, name="бот поддержки")
    engine.create_api_key(alice, alice.user_id, name="alice-private-key")
    admin = login(root_key)
    listed = admin.get(f"/users/{bob.user_id}/keys")
    assert listed.status_code == 200
    assert f'<tr id="key-{bobs}">' in listed.text and "бот поддержки" in listed.text
    assert "alice-private-key" not in listed.text  # seeded: another user's key
    assert f'href="/users/{bob.user_id}/keys"' in admin.get("/users").text

    _, bob_key = engine.create_api_key(bob, bob.user_id, name="bob's browser")
    refused = login(bob_key).get(f"/users/{alice.user_id}/keys")
    assert refused.status_code == 403 and "alice-private-key" not in refused.text

    revoked = admin.post(
        f"/users/{bob.user_id}/keys/{bobs}/revoke", data={"csrf": form_token(listed.text)}
    )
    assert (
        revoked.status_code == 303 and revoked.headers["location"] == f"/users/{bob.user_id}/keys"
    )
    (after,) = [k for k in engine.list_api_keys(root, bob.user_id) if k.id == bobs]
    assert after.revoked_at is not None

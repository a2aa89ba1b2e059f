"""The request log over REST: who read what, under which key; only an administrator reads
other users' rows; an erased entry's id leaves the log; query text only when turned on."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.support.api import API, Account, add_turn, create_memory, ok

from recallery import Client, Engine
from recallery.api import create_app


def _search(client: TestClient, memory_id: str, query: str) -> list[int]:
    params = {"query": query, "memory_id": memory_id}
    return [int(h["message_id"]) for h in ok(client.get(f"{API}/messages/search", params=params))]


def _logged(client: TestClient, engine: Engine, **filters: str) -> list[dict[str, Any]]:
    engine.request_recorder.flush()
    rows: list[dict[str, Any]] = ok(client.get(f"{API}/admin/requests", params=filters))["requests"]
    return rows


def test_a_search_s_returned_ids_are_logged_under_the_caller_s_key(
    engine: Engine, alice: Account, as_alice: TestClient, http: Callable[[str | None], TestClient]
) -> None:
    memory = create_memory(as_alice)
    add_turn(as_alice, [memory["id"]], "zanzibar marmalade on toast")
    add_turn(as_alice, [memory["id"]], "a walk by the harbour")
    returned = _search(as_alice, memory["id"], "zanzibar marmalade")
    assert returned
    key_id = ok(as_alice.get(f"{API}/users/me"))["key_id"]
    assert key_id
    (row,) = _logged(as_alice, engine, route=f"{API}/messages/search")
    assert (row["key_id"], row["user_id"], row["status"]) == (key_id, alice.id, 200)
    assert row["entry_ids"] == sorted(returned) and row["memory_ids"] == [memory["id"]]
    assert row["channel"] == "rest" and row["query"] is None  # query text is off by default
    by_entry = _logged(as_alice, engine, entry=str(returned[0]))
    assert [r["id"] for r in by_entry] == [row["id"]]
    # the entry's access history agrees with the use count the search moved
    engine.usage.flush()
    reads = ok(as_alice.get(f"{API}/messages/{memory['id']}:{returned[0]}/reads"))
    assert (reads["returned"], reads["use_count"]) == (1, 1)
    assert [k["key_id"] for k in reads["by_key"]] == [key_id]


def test_a_key_without_admin_rights_reads_only_its_own_user_s_rows(
    engine: Engine,
    admin: Account,
    alice: Account,
    bob: Account,
    as_alice: TestClient,
    http: Callable[[str | None], TestClient],
) -> None:
    as_bob, as_admin = http(bob.key), http(admin.key)
    bobs = create_memory(as_bob, name="bobs")
    add_turn(as_bob, [bobs["id"]], "bob's secret plans")
    _search(as_bob, bobs["id"], "secret plans")
    ok(as_admin.get(f"{API}/users"))
    ok(as_alice.get(f"{API}/memories"))
    everyone = _logged(as_admin, engine, page_size="100")
    assert {bob.id, admin.id, alice.id} <= {r["user_id"] for r in everyone}
    own = _logged(as_alice, engine, page_size="100")
    assert own and {r["user_id"] for r in own} == {alice.id}
    assert not [r for r in own if bobs["id"] in r["memory_ids"]]  # seeded, must not show
    refused = as_alice.get(f"{API}/admin/requests", params={"user": bob.id})
    assert refused.status_code == 403
    assert _logged(as_alice, engine, memory=bobs["id"]) == []


def test_erasing_an_entry_removes_its_id_from_the_log(
    engine: Engine, as_alice: TestClient, admin: Account, http: Callable[[str | None], TestClient]
) -> None:
    memory = create_memory(as_alice)
    add_turn(as_alice, [memory["id"]], "zanzibar marmalade on toast")
    (erased, *_) = _search(as_alice, memory["id"], "zanzibar marmalade")
    ok(as_alice.get(f"{API}/messages/{memory['id']}:{erased}/content"))
    engine.request_recorder.flush()
    assert _logged(http(admin.key), engine, entry=str(erased))
    ok(as_alice.post(f"{API}/messages/{memory['id']}:{erased}/erase", json={}))
    as_admin = http(admin.key)
    assert _logged(as_admin, engine, entry=str(erased)) == []
    for row in _logged(as_admin, engine, page_size="100"):
        assert erased not in row["entry_ids"]
    with engine.store.read() as r:
        assert r.conn.execute(
            "SELECT count(*) FROM request_entries WHERE message_id = ?", [erased]
        ) == [(0,)]


def test_query_text_is_kept_only_when_turned_on(
    engine: Engine, alice: Account, admin: Account
) -> None:
    from dataclasses import replace

    engine.request_recorder.settings = replace(engine.settings, request_log_queries=True)
    client = TestClient(create_app(engine), headers={"Authorization": f"Bearer {alice.key}"})
    memory = create_memory(client)
    _search(client, memory["id"], "zanzibar marmalade")
    (row,) = _logged(client, engine, route=f"{API}/messages/search")
    assert row["query"] == "zanzibar marmalade"


@pytest.mark.parametrize("bad", [{"status": "teapot"}, {"slow": "-1"}, {"entry": "x"}])
def test_a_bad_filter_is_refused_by_name(as_alice: TestClient, bad: dict[str, str]) -> None:
    response = as_alice.get(f"{API}/admin/requests", params=bad)
    assert response.status_code == 400
    assert next(iter(bad)) in response.json()["message"]


def test_the_sdk_reads_the_log_and_an_entry_s_history(
    engine: Engine, alice: Account, as_alice: TestClient, sdk: Callable[[str | None], Client]
) -> None:
    memory = create_memory(as_alice)
    add_turn(as_alice, [memory["id"]], "zanzibar marmalade on toast")
    (found, *_) = _search(as_alice, memory["id"], "zanzibar marmalade")
    engine.request_recorder.flush()
    client = sdk(alice.key)
    page = client.request_log(route=f"{API}/messages/search", entry=found)
    assert page.total == 1 and page.items[0].entry_ids == (found,)
    reads = client.entry_reads(memory["id"], found)
    assert reads.returned == 1 and reads.by_key[0].user_id == alice.id


def test_an_mcp_recall_is_logged_under_its_tool_and_key(
    engine: Engine, alice: Account, as_alice: TestClient
) -> None:
    import anyio
    from tests.support.mcp_sessions import over_http

    from recallery.mcp import http as mcp_http

    app = create_app(engine)
    mcp_http.mount(app, engine, mcp_http.local_security())
    memory = create_memory(as_alice)
    add_turn(as_alice, [memory["id"]], "zanzibar marmalade on toast")
    found: list[int] = []

    async def recall() -> None:
        async with over_http(app, alice.key) as s:
            data = await s.ok("recall", query="zanzibar", memory=memory["id"], threshold=0.0)
            found.extend(int(r["id"]) for r in data["results"])

    anyio.run(recall)
    (row,) = _logged(as_alice, engine, route="recall")
    assert row["channel"] == "mcp" and row["status"] == 200 and row["user_id"] == alice.id
    assert found and row["entry_ids"] == sorted(found) and row["key_id"]


def test_a_key_reads_the_log_only_within_its_scope_and_only_with_read(
    engine: Engine, alice: Account, as_alice: TestClient, http: Callable[[str | None], TestClient]
) -> None:
    chinese = create_memory(as_alice, name="笔记")
    russian = create_memory(as_alice, name="заметки")
    add_turn(as_alice, [chinese["id"]], "李雷喜欢喝乌龙茶", user_id="li")
    add_turn(as_alice, [chinese["id"]], "王芳每天早上跑步", user_id="wang")
    add_turn(as_alice, [russian["id"]], "Ольга любит зелёный чай", user_id="olga")
    _, scoped_key = engine.create_api_key(alice.principal, alice.id, scope=[chinese["id"]])
    as_scoped = http(scoped_key)
    _search(as_alice, russian["id"], "зелёный чай")  # outside the scope: must not show
    ok(as_alice.get(f"{API}/memories"))  # names no memory: must not show either
    _search(as_alice, chinese["id"], "乌龙茶")  # another key, within the scope: shows
    _search(as_scoped, chinese["id"], "跑步")  # its own
    seen = _logged(as_scoped, engine, page_size="100")
    assert {r["route"] for r in seen} == {f"{API}/messages/search"} and len(seen) == 2
    assert all(r["memory_ids"] == [chinese["id"]] for r in seen)
    assert _logged(as_scoped, engine, memory=russian["id"]) == []
    everything = _logged(as_alice, engine, page_size="100")  # the unscoped key sees it all
    assert [r for r in everything if r["memory_ids"] == [russian["id"]]]
    for capabilities in (["write"], ["manage"], ["write", "manage"]):
        _, key = engine.create_api_key(alice.principal, alice.id, capabilities=capabilities)
        refused = http(key).get(f"{API}/admin/requests")
        assert refused.status_code == 403 and "'read' capability" in refused.json()["message"]


def test_a_refused_request_is_logged_as_a_refusal_naming_no_entry(
    engine: Engine,
    alice: Account,
    bob: Account,
    as_alice: TestClient,
    http: Callable[[str | None], TestClient],
    admin: Account,
) -> None:
    as_bob = http(bob.key)
    bobs = create_memory(as_bob, name="bobs")
    (theirs, *_) = add_turn(as_bob, [bobs["id"]], "Борис прячет ключ под ковриком")
    mine = create_memory(as_alice)
    for memory_id in (mine["id"], bobs["id"]):  # another tenant's entry, through either memory
        probe = as_alice.get(f"{API}/messages/{memory_id}:{theirs['message_id']}/content")
        assert probe.status_code == 404
    missing = as_alice.get(f"{API}/messages/{mine['id']}:987654321/content")
    assert missing.status_code == 404
    rows = _logged(as_alice, engine, status="404")
    assert len(rows) == 3 and all(r["entry_ids"] == [] for r in rows)
    assert _logged(http(admin.key), engine, entry=str(theirs["message_id"])) == []
    reads = ok(as_bob.get(f"{API}/messages/{bobs['id']}:{theirs['message_id']}/reads"))
    assert reads["named"] == 0 and reads["by_key"] == []


def test_requests_without_a_valid_key_cannot_push_out_what_keys_did(
    engine: Engine, alice: Account, as_alice: TestClient, http: Callable[[str | None], TestClient]
) -> None:
    from dataclasses import replace

    log = engine.request_recorder
    log.settings = replace(engine.settings, request_log_max_rows=20)
    memory = create_memory(as_alice)
    for _ in range(4):
        _search(as_alice, memory["id"], "zanzibar")
    anonymous, guessing = http(None), http("rc-guess")
    for _ in range(60):
        assert anonymous.get(f"{API}/memories").status_code == 401
        assert guessing.get(f"{API}/memories").status_code in (401, 429)
    log.flush()
    log.prune()
    with engine.store.read() as r:
        (kept,) = r.conn.execute("SELECT count(*) FROM requests WHERE user_id = ''")[0]
    assert kept == 2  # their own budget: a tenth of the log
    own = _logged(as_alice, engine, page_size="100")
    assert len(own) == 5  # the memory, four searches: none pushed out

"""recallery's extensions over HTTP: correct, review, restore, erase, history, evidence, audit,
as-of and valid-on search, context, jobs, export and import."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.support.api import API, Account, add_turn, create_memory, error, ok, seed_extract

from recallery import Engine
from recallery.models import JobState
from recallery.retrieval.context import HEADER, approx_tokens
from recallery.testing import FrozenClock

Http = Callable[[str | None], TestClient]


def search(api: TestClient, query: str, memory_id: str, **params: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = ok(
        api.get(f"{API}/messages/search", params={"query": query, "memory_id": memory_id, **params})
    )
    return found


def entry_url(memory_id: str, message_id: int) -> str:
    return f"{API}/messages/{memory_id}:{message_id}"


def audit(api: TestClient, **params: Any) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = ok(api.get(f"{API}/audit", params=params))["events"]
    return events


# --- correct and history -------------------------------------------------------------------


def test_correct_writes_a_new_version_and_retires_the_old(
    as_alice: TestClient, alice: Account, clock: FrozenClock
) -> None:
    m = create_memory(as_alice)
    (old,) = add_turn(as_alice, [m["id"]], "the office is in Paris")
    clock.advance(hours=1)
    new = ok(
        as_alice.post(
            f"{entry_url(m['id'], old['message_id'])}/correct",
            json={"content": "the office is in Lyon", "reason": "moved"},
        )
    )
    assert (new["origin"], new["supersedes"], new["content"]) == (
        "correction",
        old["message_id"],
        "the office is in Lyon",
    )
    versions = ok(as_alice.get(f"{entry_url(m['id'], new['message_id'])}/history"))
    assert [v["message_id"] for v in versions] == [old["message_id"], new["message_id"]]
    assert versions[0]["superseded_by"] == new["message_id"]
    assert versions[0]["retired_at"] == clock.now().isoformat()
    assert [f["message_id"] for f in search(as_alice, "office", m["id"])] == [new["message_id"]]
    actions = [(e["action"], e["actor"], e["reason"]) for e in audit(as_alice, memory_id=m["id"])]
    assert actions[:2] == [
        ("entry.correct", alice.id, "moved"),
        ("entry.retire", alice.id, "moved"),
    ]
    again = as_alice.post(f"{entry_url(m['id'], old['message_id'])}/correct", json={"content": "x"})
    assert "is not current" in error(again, 409, 409)
    missing = as_alice.post(f"{entry_url(m['id'], new['message_id'])}/correct", json={})
    assert error(missing, 400, 101) == "required argument are missing: content; "


def test_as_of_sees_what_the_store_knew_then(as_alice: TestClient, clock: FrozenClock) -> None:
    m = create_memory(as_alice)
    (old,) = add_turn(as_alice, [m["id"]], "the office is in Paris")
    before = clock.now().isoformat()
    clock.advance(hours=1)
    ok(
        as_alice.post(
            f"{entry_url(m['id'], old['message_id'])}/correct",
            json={"content": "the office is in Lyon"},
        )
    )
    then = search(as_alice, "office", m["id"], as_of=before)
    now = search(as_alice, "office", m["id"])
    assert [f["content"] for f in then] == [old["content"]]
    assert [f["content"] for f in now] == ["the office is in Lyon"]


def test_valid_on_sees_what_was_true_then(as_alice: TestClient) -> None:
    m = create_memory(as_alice)
    add_turn(as_alice, [m["id"]], "tea in 2024", conversation_time="2024-06-01T00:00:00Z")
    add_turn(as_alice, [m["id"]], "tea in 2020", conversation_time="2020-06-01T00:00:00Z")
    assert [
        f["content"] for f in search(as_alice, "tea", m["id"], valid_on="2022-01-01T00:00:00Z")
    ] == ["User Input: tea in 2020\nAgent Response: ok"]
    assert len(search(as_alice, "tea", m["id"], valid_on="2025-01-01 00:00:00")) == 2
    assert search(as_alice, "tea", m["id"], valid_on="2019-01-01T00:00:00Z") == []


def test_message_type_and_fusion_on_search(as_alice: TestClient, engine: Engine) -> None:
    m = create_memory(as_alice, memory_type=["raw", "semantic"])
    (raw,) = add_turn(as_alice, [m["id"]], "the user lives in Lyon")
    fact = seed_extract(engine, raw, "The user lives in Lyon.")
    assert {f["message_id"] for f in search(as_alice, "lives Lyon", m["id"])} == {
        raw["message_id"],
        fact,
    }
    assert [
        f["message_id"] for f in search(as_alice, "lives Lyon", m["id"], message_type="semantic")
    ] == [fact]
    assert [
        f["message_id"] for f in search(as_alice, "lives Lyon", m["id"], message_type="raw")
    ] == [raw["message_id"]]
    fused = search(as_alice, "lives Lyon", m["id"], fusion="rrf", similarity_threshold=0)
    assert {f["message_id"] for f in fused} == {raw["message_id"], fact}


# --- review, restore -----------------------------------------------------------------------


def test_review_rejects_out_of_search_and_confirms_back(as_alice: TestClient) -> None:
    m = create_memory(as_alice)
    (w,) = add_turn(as_alice, [m["id"]], "tea is poison")
    url = f"{entry_url(m['id'], w['message_id'])}/review"
    rejected = ok(as_alice.post(url, json={"verdict": "rejected", "reason": "false"}))
    assert rejected["trust"] == "rejected"
    assert search(as_alice, "tea", m["id"]) == []
    assert ok(as_alice.post(url, json={"verdict": "confirmed"}))["trust"] == "confirmed"
    assert len(search(as_alice, "tea", m["id"])) == 1
    assert [e["action"] for e in audit(as_alice, message_id=w["message_id"])][:2] == [
        "entry.confirm",
        "entry.reject",
    ]
    response = as_alice.post(url, json={"verdict": "maybe"})
    assert response.json()["data"]["field"] == "verdict" and error(response, 400, 101)
    assert (
        error(as_alice.post(url, json={}), 400, 101) == "required argument are missing: verdict; "
    )


def test_restore_undoes_forget(as_alice: TestClient) -> None:
    m = create_memory(as_alice)
    (w,) = add_turn(as_alice, [m["id"]], "tea time")
    ok(as_alice.delete(entry_url(m["id"], w["message_id"])))
    assert search(as_alice, "tea", m["id"]) == []
    assert ok(as_alice.post(f"{entry_url(m['id'], w['message_id'])}/restore")) == {
        "changed": [w["message_id"]]
    }
    assert [f["forget_at"] for f in search(as_alice, "tea", m["id"])] == [None]


# --- erase and evidence --------------------------------------------------------------------


def test_erase_returns_a_receipt_and_leaves_no_content_behind(
    as_alice: TestClient, alice: Account, engine: Engine, clock: FrozenClock
) -> None:
    m = create_memory(as_alice, memory_type=["raw", "semantic"])
    (raw,) = add_turn(as_alice, [m["id"]], "my passport number is X123")
    fact = seed_extract(engine, raw, "The passport number is X123.")
    (other,) = add_turn(as_alice, [m["id"]], "passport office hours")
    receipt = ok(
        as_alice.post(f"{entry_url(m['id'], raw['message_id'])}/erase", json={"reason": "GDPR"})
    )
    assert receipt == {
        "memory_id": m["id"],
        "requested": raw["message_id"],
        "erased": sorted([raw["message_id"], fact]),
        "at": clock.now().isoformat(),
        "actor": alice.id,
        "reason": "GDPR",
        "scrubbed": True,
    }
    for gone in (raw["message_id"], fact):
        assert error(as_alice.get(f"{entry_url(m['id'], gone)}/content"), 404, 404)
    assert [f["message_id"] for f in search(as_alice, "passport", m["id"])] == [other["message_id"]]
    exported = as_alice.get(f"{API}/memories/{m['id']}/export").text
    assert "X123" not in exported and "passport office hours" in exported
    assert "X123" not in json.dumps(audit(as_alice, memory_id=m["id"]))


def test_evidence_lists_the_source_turn(as_alice: TestClient, engine: Engine) -> None:
    m = create_memory(as_alice, memory_type=["raw", "semantic"])
    (raw,) = add_turn(as_alice, [m["id"]], "I live in Lyon")
    fact = seed_extract(engine, raw, "The user lives in Lyon.")
    assert ok(as_alice.get(f"{entry_url(m['id'], fact)}/evidence")) == {
        "message_id": fact,
        "source_ids": [raw["message_id"]],
    }
    assert ok(as_alice.get(f"{entry_url(m['id'], raw['message_id'])}/evidence"))["source_ids"] == []


# --- audit ---------------------------------------------------------------------------------


def test_audit_filters_by_memory_entry_actor_action_and_time(
    as_alice: TestClient, http: Http, alice: Account, bob: Account, clock: FrozenClock
) -> None:
    shared = create_memory(as_alice, "shared", permissions="team")
    other = create_memory(as_alice, "other")
    ok(as_alice.post(f"{API}/teams/{alice.id}/members", json={"user_id": bob.id}))
    start = clock.now()
    clock.advance(minutes=1)
    (by_alice,) = add_turn(as_alice, [shared["id"]], "alice writes")
    clock.advance(minutes=1)
    middle = clock.now()
    (by_bob,) = add_turn(http(bob.key), [shared["id"]], "bob writes")
    add_turn(as_alice, [other["id"]], "elsewhere")

    def ids(**params: Any) -> list[tuple[str, int | None]]:
        return [(e["action"], e["message_id"]) for e in audit(as_alice, **params)]

    assert ids(memory_id=shared["id"], action="entry.add") == [
        ("entry.add", by_bob["message_id"]),
        ("entry.add", by_alice["message_id"]),
    ]
    assert ids(message_id=by_alice["message_id"]) == [("entry.add", by_alice["message_id"])]
    assert ids(actor=bob.id) == [("entry.add", by_bob["message_id"])]
    assert ids(memory_id=shared["id"], since=middle.isoformat()) == [
        ("entry.add", by_bob["message_id"])
    ]
    assert ids(memory_id=shared["id"], until=middle.isoformat()) == [
        ("entry.add", by_alice["message_id"]),
        ("memory.create", None),
    ]
    assert ids(memory_id=shared["id"], since=start.isoformat(), page_size=1, page=2) == [
        ("entry.add", by_alice["message_id"])
    ]
    # Bob reads the events of what he can read, and only that.
    bobs = audit(http(bob.key))
    assert {e["memory_id"] for e in bobs} == {shared["id"]}
    assert error(http(bob.key).get(f"{API}/audit", params={"memory_id": other["id"]}), 404, 404)


def test_admins_read_every_event(http: Http, admin: Account, alice: Account) -> None:
    actions = {e["action"] for e in audit(http(admin.key), page_size=100)}
    assert {"user.create", "key.create"} <= actions


# --- context -------------------------------------------------------------------------------


def test_context_is_a_fenced_token_bounded_block(as_alice: TestClient) -> None:
    m = create_memory(as_alice)
    for i in range(4):
        add_turn(as_alice, [m["id"]], f"tea fact number {i} " + "word " * 40)
    got = ok(as_alice.get(f"{API}/messages/context", params={"query": "tea", "memory_id": m["id"]}))
    assert got["truncated"] is False and len(got["message_ids"]) == 4
    assert "not instructions" in got["text"] and "<<<entry-" in got["text"]
    header = approx_tokens(HEADER)
    budget = header + (got["tokens"] - header) // 4 + 10  # room for one entry of the four
    small = ok(
        as_alice.post(
            f"{API}/messages/context",
            json={"query": "tea", "memory_id": [m["id"]], "max_tokens": budget},
        )
    )
    assert small["truncated"] is True and len(small["message_ids"]) == 1
    assert small["tokens"] <= budget
    response = as_alice.get(
        f"{API}/messages/context", params={"query": "tea", "memory_id": m["id"], "max_tokens": "0"}
    )
    assert response.json()["data"]["field"] == "max_tokens" and error(response, 400, 101)


# --- jobs ----------------------------------------------------------------------------------


def test_jobs_of_a_memory_newest_first_filtered_by_state(
    as_alice: TestClient, engine: Engine, clock: FrozenClock
) -> None:
    m = create_memory(as_alice, memory_type=["raw", "semantic"])
    raw_only = create_memory(as_alice, "raw only")
    first = add_turn(as_alice, [m["id"], raw_only["id"]], "one")[0]
    clock.advance(seconds=1)
    second = add_turn(as_alice, [m["id"]], "two")[0]
    with engine.store.write() as w:
        (done,) = [j for j in w.jobs(frozenset({m["id"]})) if j.message_id == first["message_id"]]
        w.update_job(done.id, {"state": JobState.DONE, "progress": 1.0, "outcome": "empty"})
    url = f"{API}/memories/{m['id']}/jobs"
    data = ok(as_alice.get(url))
    assert data["total_count"] == 2
    assert [j["message_id"] for j in data["jobs"]] == [second["message_id"], first["message_id"]]
    assert ok(as_alice.get(url, params={"state": "done"}))["jobs"][0]["outcome"] == "empty"
    assert [j["message_id"] for j in ok(as_alice.get(url, params={"state": "queued"}))["jobs"]] == [
        second["message_id"]
    ]
    assert len(ok(as_alice.get(url, params={"page_size": 1, "page": 2}))["jobs"]) == 1
    assert ok(as_alice.get(f"{API}/memories/{raw_only['id']}/jobs")) == {
        "jobs": [],
        "total_count": 0,
    }
    response = as_alice.get(url, params={"state": "sleeping"})
    assert response.json()["data"]["field"] == "state" and error(response, 400, 101)


# --- export and import ---------------------------------------------------------------------


@pytest.fixture
def exported(
    as_alice: TestClient, engine: Engine, clock: FrozenClock
) -> tuple[dict[str, Any], str]:
    """A memory with three turns (one disabled, one forgotten) and an extract, exported."""
    m = create_memory(as_alice, "journal", memory_type=["raw", "semantic"], description="d")
    a = add_turn(
        as_alice,
        [m["id"]],
        "I live in Lyon",
        user_id="u1",
        conversation_time="2023-03-04T05:06:07Z",
    )[0]
    b = add_turn(
        as_alice, [m["id"]], "I like tea", agent_id="a2", conversation_time="2023-04-01T00:00:00Z"
    )[0]
    c = add_turn(as_alice, [m["id"]], "I hate mondays", session_id="s9")[0]
    seed_extract(engine, a, "The user lives in Lyon.")
    ok(as_alice.put(entry_url(m["id"], b["message_id"]), json={"status": False}))
    ok(as_alice.delete(entry_url(m["id"], c["message_id"])))
    response = as_alice.get(f"{API}/memories/{m['id']}/export")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/x-ndjson")
    return m, response.text


def test_export_is_a_header_then_every_current_entry(exported: tuple[dict[str, Any], str]) -> None:
    _, text = exported
    lines = [json.loads(line) for line in text.splitlines()]
    header, *entries = lines
    assert (header["record"], header["format"], header["version"]) == (
        "memory",
        "recallery.memory",
        1,
    )
    assert header["memory"]["name"] == "journal" and header["memory"]["memory_type"] == [
        "raw",
        "semantic",
    ]
    assert [(e["record"], e["message_type"]) for e in entries] == [("entry", "raw")] * 3 + [
        ("entry", "semantic")
    ]
    assert entries[0]["valid_at"] == "2023-03-04 05:06:07"
    assert entries[3]["source_id"] == entries[0]["message_id"]
    assert entries[1]["status"] is False and entries[2]["forget_at"] is not None


def test_import_as_a_new_memory_keeps_times_provenance_and_state(
    as_alice: TestClient, exported: tuple[dict[str, Any], str]
) -> None:
    m, text = exported
    response = as_alice.post(
        f"{API}/memories/import", content=text, headers={"Content-Type": "application/x-ndjson"}
    )
    report = ok(response)
    assert (
        report["imported"],
        report["skipped_extracted"],
        report["disabled"],
        report["forgotten"],
    ) == (3, 1, 1, 1)
    new_id = report["memory_id"]
    assert new_id != m["id"]
    config = ok(as_alice.get(f"{API}/memories/{new_id}/config"))
    assert (config["name"], config["description"]) == ("journal(1)", "d")
    rows = ok(as_alice.get(f"{API}/memories/{new_id}"))["messages"]["message_list"]
    by_text = {r["content"].split("\n")[0]: r for r in rows}
    lyon = by_text["User Input: I live in Lyon"]
    assert (lyon["valid_at"], lyon["user_id"]) == ("2023-03-04 05:06:07", "u1")
    assert by_text["User Input: I like tea"]["status"] is False
    assert by_text["User Input: I like tea"]["agent_id"] == "a2"
    assert by_text["User Input: I hate mondays"]["forget_at"] is not None
    old_ids = [json.loads(line)["message_id"] for line in text.splitlines()[1:4]]
    assert sorted(int(k) for k in report["id_map"]) == sorted(old_ids)


def test_import_into_an_existing_memory_from_a_json_array(as_alice: TestClient) -> None:
    target = create_memory(as_alice, "target")
    records = [
        {"content": "plain log line one"},
        {"content": "two", "valid_at": "2021-01-01 10:00:00"},
    ]
    report = ok(as_alice.post(f"{API}/memories/{target['id']}/import", json=records))
    assert (report["memory_id"], report["imported"], report["id_map"]) == (target["id"], 2, {})
    found = ok(as_alice.get(f"{API}/messages", params={"memory_id": target["id"]}))
    assert sorted(f["valid_at"] for f in found)[0] == "2021-01-01 10:00:00"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('{"content": "ok"}\nnot json\n', "line 2: not valid JSON"),
        ('{"record": "entry"}\n', "record 1: content must be a string."),
        (
            '{"content": "x", "message_type": "gossip"}\n',
            "record 1: unknown message_type 'gossip'.",
        ),
        ('{"record": "memory", "format": "other", "memory": {}}\n', "record 1: unsupported format"),
        ("[1]", "record 1: must be a JSON object."),
    ],
)
def test_import_rejects_bad_records_and_writes_nothing(
    as_alice: TestClient, engine: Engine, body: str, message: str
) -> None:
    target = create_memory(as_alice, "target")
    media = "application/json" if body.startswith("[") else "application/x-ndjson"
    response = as_alice.post(
        f"{API}/memories/{target['id']}/import", content=body, headers={"Content-Type": media}
    )
    assert message in error(response, 400, 101)
    with engine.store.read() as r:
        assert r.conn.execute("SELECT count(*) FROM entries")[0][0] == 0


def test_import_of_a_new_memory_needs_the_header(as_alice: TestClient) -> None:
    response = as_alice.post(f"{API}/memories/import", json=[{"content": "x"}])
    assert error(response, 400, 101) == "a new memory needs the export's header record."

"""Curation over REST and the SDK: bulk changes with a dry run, the review queue and the
timeline. Each seeds entries the operation must leave alone."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from fastapi.testclient import TestClient
from tests.support.api import API, Account, add_turn, create_memory, error, ok, seed_extract

from recallery import Client, Engine, Forbidden, InvalidInput, NotFound
from recallery.models import EntryType
from recallery.requests import Bucket, BulkAction, MessageFilter
from recallery.wire import entry_dict

Sdk = Callable[[str | None], Client]


def searched(api: TestClient, memory_id: str, query: str) -> set[int]:
    params = {"query": query, "memory_id": memory_id, "top_n": 20, "similarity_threshold": 0}
    return {h["message_id"] for h in ok(api.get(f"{API}/messages/search", params=params))}


def test_bulk_forget_by_filter_with_a_dry_run_first(as_alice: TestClient, engine: Engine) -> None:
    m = create_memory(as_alice)
    trip = [add_turn(as_alice, [m["id"]], f"porto note {i}", session_id="trip")[0] for i in (1, 2)]
    home = add_turn(as_alice, [m["id"]], "porto at home", session_id="home")[0]
    url = f"{API}/memories/{m['id']}/bulk"
    body = {"action": "forget", "filter": {"session_id": "trip"}}

    dry = ok(as_alice.post(url, json=body))
    assert dry == {
        "action": "forget",
        "dry_run": True,
        "count": 2,
        "selected": 2,
        "ids": sorted(t["message_id"] for t in trip),
        "changed": sorted(t["message_id"] for t in trip),
        "token": dry["token"],
    }
    assert len(searched(as_alice, m["id"], "porto")) == 3
    done = ok(as_alice.post(url, json={**body, "dry_run": False}))
    assert done["changed"] == dry["ids"] and not done["dry_run"]
    assert searched(as_alice, m["id"], "porto") == {home["message_id"]}
    events = ok(
        as_alice.get(f"{API}/audit", params={"memory_id": m["id"], "action": "entry.forget"})
    )
    assert sorted(e["message_id"] for e in events["events"]) == dry["ids"]


def test_bulk_refusals_name_their_field(
    as_alice: TestClient, http: Callable[[str | None], TestClient], bob: Account
) -> None:
    m = create_memory(as_alice)
    (t,) = add_turn(as_alice, [m["id"]], "a turn")
    url = f"{API}/memories/{m['id']}/bulk"
    assert "action" in error(as_alice.post(url, json={"message_ids": [1]}), 400, 101)
    assert "filter.trust" in error(
        as_alice.post(url, json={"action": "forget", "filter": {"trust": "sure"}}), 400, 101
    )
    assert "filter.colour" in error(
        as_alice.post(url, json={"action": "forget", "filter": {"colour": "red"}}), 400, 101
    )
    assert "message_ids" in error(
        as_alice.post(url, json={"action": "forget", "message_ids": "1,2"}), 400, 101
    )
    assert "not found" in error(
        http(bob.key).post(url, json={"action": "forget", "message_ids": [t["message_id"]]}),
        404,
        404,
    )
    assert searched(as_alice, m["id"], "turn") == {t["message_id"]}


def test_the_review_queue_and_timeline_routes(as_alice: TestClient, engine: Engine) -> None:
    m = create_memory(as_alice, memory_type=["raw", "semantic"])
    (raw,) = add_turn(as_alice, [m["id"]], "I live in Lisbon")
    first = seed_extract(engine, raw, "The user lives in Lisbon.")
    second = seed_extract(engine, raw, "The user likes the sea.")
    ok(as_alice.post(f"{API}/messages/{m['id']}:{second}/review", json={"verdict": "confirmed"}))
    queue = ok(as_alice.get(f"{API}/memories/{m['id']}/review"))
    assert queue["total_count"] == 1
    assert [(i["entry"]["message_id"], i["source"]["message_id"]) for i in queue["items"]] == [
        (first, raw["message_id"])
    ]
    line = ok(as_alice.get(f"{API}/memories/{m['id']}/timeline", params={"buckets": "3"}))
    assert line["bucket"] == "day" and len(line["starts"]) == 3
    assert line["counts"] == {"raw": [0, 0, 1], "semantic": [0, 0, 2]}
    bad = as_alice.get(f"{API}/memories/{m['id']}/timeline", params={"bucket": "year"})
    assert "bucket" in error(bad, 400, 101)
    assert "buckets" in error(
        as_alice.get(f"{API}/memories/{m['id']}/timeline", params={"buckets": "x"}), 400, 101
    )


def test_the_sdk_offers_curation(sdk: Sdk, alice: Account, engine: Engine) -> None:
    ms = sdk(alice.key)
    memory = ms.create_memory("sdk", ["raw", "semantic"], "x@Builtin", "y@Z")
    a, b = (
        ms.add_turn([memory.id], user_input=t, agent_response="ok", user_id=u)[0]
        for t, u in (("tea at noon", "u-1"), ("tea at night", "u-2"))
    )
    fact = seed_extract(engine, entry_dict(a), "The user drinks tea.")
    queue = ms.review_queue(memory.id)
    assert [(i.entry.message_id, i.source and i.source.message_id) for i in queue.items] == [
        (fact, a.message_id)
    ]

    dry = ms.bulk(memory.id, "disable", filter=MessageFilter(user_id="u-1"))
    assert (dry.action, dry.dry_run, dry.ids) == (BulkAction.DISABLE, True, (a.message_id,))
    done = ms.bulk(memory.id, "disable", filter=MessageFilter(user_id="u-1"), dry_run=False)
    assert set(done.changed) == {a.message_id, fact}
    assert {h.entry.message_id for h in ms.search("tea", [memory.id], similarity_threshold=0)} == {
        b.message_id
    }
    assert ms.review_queue(memory.id).total == 0  # disabled: it waits for no verdict
    line = ms.timeline(memory.id, bucket="hour", buckets=2)
    assert line.bucket is Bucket.HOUR and line.counts[EntryType.RAW] == (0, 2)
    erased = ms.bulk(memory.id, "erase", message_ids=[b.message_id], dry_run=False, reason="x")
    assert erased.changed == (b.message_id,)
    with pytest.raises(NotFound):
        ms.bulk(memory.id, "forget", message_ids=[b.message_id])
    with pytest.raises(InvalidInput):
        ms.timeline(memory.id, buckets=0)


def test_erase_in_bulk_is_the_owners(
    sdk: Sdk, alice: Account, bob: Account, engine: Engine
) -> None:
    ms = sdk(alice.key)
    memory = ms.create_memory("team", ["raw"], "x@Builtin", "y@Z", permissions="team")
    (t,) = ms.add_turn([memory.id], user_input="shared", agent_response="ok")
    ms.join_team(alice.id, bob.id)
    with pytest.raises(Forbidden):
        sdk(bob.key).bulk(memory.id, "erase", message_ids=[t.message_id])
    assert sdk(bob.key).bulk(memory.id, "forget", message_ids=[t.message_id]).count == 1

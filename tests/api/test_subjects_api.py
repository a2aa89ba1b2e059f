"""Data-subject requests over REST and the SDK: forget or erase everything about one end user
across the memories the key may change, a dry run first. Each seeds another user's entries,
and a memory the key may not change, that the request must leave alone."""

from __future__ import annotations

from collections.abc import Callable

from fastapi.testclient import TestClient
from tests.support.api import API, Account, add_turn, create_memory, error, ok, seed_extract

from recallery import Client, Engine
from recallery.models import Scope
from recallery.requests.subjects import SubjectAction
from recallery.store.filters import EntryFilter

Sdk = Callable[[str | None], Client]


def _held(engine: Engine, *memory_ids: str) -> set[int]:
    with engine.store.read() as r:
        return set(r.entry_ids(Scope(frozenset(memory_ids)), EntryFilter(current_only=False)))


def _seed(api: TestClient, engine: Engine) -> tuple[list[str], set[int], set[int]]:
    """Two memories with turns of Tom (one with an extract) and Ann; their ids and entries."""
    ids = [create_memory(api, name)["id"] for name in ("one", "two")]
    tom: set[int] = set()
    ann: set[int] = set()
    for mid in ids:
        (t,) = add_turn(api, [mid], "Tom's passport is X-99", user_id="tom/1")
        tom |= {t["message_id"], seed_extract(engine, t, "the passport is X-99")}
        (a,) = add_turn(api, [mid], "Ann likes figs", user_id="ann")
        ann.add(a["message_id"])
    return ids, tom, ann


def test_erase_a_user_over_rest_with_the_dry_run_first(
    as_alice: TestClient, engine: Engine, alice: Account
) -> None:
    ids, tom, ann = _seed(as_alice, engine)
    url = f"{API}/subjects/tom%2F1/erase"
    dry = ok(as_alice.post(url, json={"reason": "request 5"}))
    assert (dry["dry_run"], dry["user_id"], dry["count"]) == (True, "tom/1", 4)
    assert (dry["entries"], dry["cascade"]) == (2, 2)  # the extracts carry no user: cascade
    assert {m["memory_id"] for m in dry["memories"]} == set(ids) and not dry["refused"]
    assert _held(engine, *ids) == tom | ann
    done = ok(as_alice.post(url, json={"dry_run": False, "reason": "request 5"}))
    assert done["memories"] == dry["memories"] and not done["dry_run"]
    assert _held(engine, *ids) == ann
    events = [
        e
        for mid in ids
        for e in ok(
            as_alice.get(f"{API}/audit", params={"memory_id": mid, "action": "entry.erase"})
        )["events"]
    ]
    assert sorted(e["message_id"] for e in events) == sorted(tom)
    assert {e["reason"] for e in events} == {"request 5"}


def test_a_key_that_may_not_change_leaves_every_memory_untouched(
    as_alice: TestClient,
    http: Callable[[str | None], TestClient],
    engine: Engine,
    alice: Account,
    bob: Account,
) -> None:
    ids, tom, ann = _seed(as_alice, engine)
    _, read_key = engine.create_api_key(alice.principal, alice.id, capabilities=["read"])
    for action in ("forget", "erase"):
        url = f"{API}/subjects/tom%2F1/{action}"
        refused = ok(http(read_key).post(url, json={"dry_run": False}))
        assert refused["count"] == 0 and {m["memory_id"] for m in refused["refused"]} == set(ids)
        assert all("lacks the" in m["reason"] for m in refused["refused"])
        stranger = ok(http(bob.key).post(url, json={"dry_run": False}))
        assert stranger["count"] == 0 and not stranger["refused"]  # Bob sees none of them
    assert _held(engine, *ids) == tom | ann
    searched = {"query": "passport", "memory_id": ids, "similarity_threshold": 0}
    assert ok(as_alice.get(f"{API}/messages/search", params=searched))


def test_bad_subject_requests_name_their_field(as_alice: TestClient) -> None:
    url = f"{API}/subjects/tom/erase"
    assert "dry_run" in error(as_alice.post(url, json={"dry_run": "yes"}), 400, 101)
    assert "reason" in error(as_alice.post(url, json={"reason": 3}), 400, 101)
    assert "kind" in error(as_alice.get(f"{API}/subjects/planet/mars"), 400, 101)


def test_the_sdk_forgets_a_user(sdk: Sdk, engine: Engine, alice: Account) -> None:
    ms = sdk(alice.key)
    one = ms.create_memory("sdk", ["raw"], "x@Builtin", "y@Z")
    (tom,) = ms.add_turn(
        [one.id], user_input="Tom is allergic to nuts", agent_response="ok", user_id="tom/1"
    )
    (ann,) = ms.add_turn(
        [one.id], user_input="Ann is allergic to cats", agent_response="ok", user_id="ann"
    )
    dry = ms.forget_subject("tom/1")
    assert (dry.action, dry.dry_run, dry.count) == (SubjectAction.FORGET, True, 1)
    done = ms.forget_subject("tom/1", dry_run=False, reason="asked")
    assert done.memories == dry.memories and done.memories[0].entries == (tom.message_id,)
    hits = ms.search("allergic", [one.id], similarity_threshold=0)
    assert {h.entry.message_id for h in hits} == {ann.message_id}
    assert ms.erase_subject("tom/1").count == 1  # forgotten, still held: erasure counts it

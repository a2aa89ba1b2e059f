"""The data-subject listing (the web's People page) over REST (``GET /subjects``) and the SDK
(``list_subjects``): the end users, agents and sessions of the memories the key may read, with
counts and last activity, searched and paged in the RAGFlow envelope. A user held only in
another owner's memory, one outside a scoped key, and anyone for a key that may not read must
be absent; ids with ``/``, ``?``, ``#``, ``..``, spaces or Chinese come back exactly, and the
SDK's data-subject calls reach them."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import numpy as np
from fastapi.testclient import TestClient
from tests.support.api import API, Account, add_turn, create_memory, error, ok

from recallery import Client, Engine
from recallery.models import EntryType, NewEntry
from recallery.requests.subjects import SubjectKind
from recallery.testing import FrozenClock

Sdk = Callable[[str | None], Client]
ODD = ("tom/1?x=2#top", "..", ".", "a b", "李雷")


def _fact(engine: Engine, raw: dict[str, object], content: str) -> int:
    """A fact extracted from ``raw``, carrying its user, as extraction writes it."""
    entry = NewEntry(
        memory_id=str(raw["memory_id"]),
        tenant_id=str(raw["tenant_id"]),
        message_type=EntryType.SEMANTIC,
        content=content,
        valid_at=datetime.fromisoformat(str(raw["recorded_at"])),
        size_bytes=100,
        user_id=str(raw["user_id"]),
        source_id=int(str(raw["message_id"])),
    )
    vector = np.zeros((1, 64), dtype=np.float32)
    vector[0, 0] = 1.0
    with engine.store.write() as w:
        (new_id,) = w.insert_entries([entry], vector, engine.clock.now())
    return new_id


def _seed(
    alice: TestClient, bob: TestClient, engine: Engine, clock: FrozenClock
) -> tuple[str, str]:
    """Alice's two memories (tom, ana and 王小明 in one; tom in the other) and Bob's private
    one (only "secret-user"); the ids of Alice's."""
    notes = create_memory(alice, "notes", memory_type=["raw", "semantic"])["id"]
    other = create_memory(alice, "other")["id"]
    for user, text in (("tom", "I live in Manchester"), ("ana", "Vivo en Valencia")):
        clock.advance(minutes=1)
        (raw,) = add_turn(alice, [notes], text, user_id=user)
        _fact(engine, raw, f"fact of {user}")
    clock.advance(minutes=1)
    add_turn(alice, [notes], "我住在北京", user_id="王小明", agent_id="concierge")
    clock.advance(minutes=1)
    add_turn(alice, [other], "Back in Leeds", user_id="tom", session_id="s/2")
    bobs = create_memory(bob, "bobs")["id"]
    add_turn(bob, [bobs], "Bob's customer", user_id="secret-user", agent_id="spy")
    return notes, other


def test_list_users_agents_and_sessions_over_rest(
    as_alice: TestClient,
    http: Callable[[str | None], TestClient],
    engine: Engine,
    clock: FrozenClock,
    bob: Account,
) -> None:
    _seed(as_alice, http(bob.key), engine, clock)
    found = ok(as_alice.get(f"{API}/subjects"))
    assert found["total_count"] == 3
    tom, wang, ana = found["subjects"]  # tom wrote last (in "other"), then 王小明
    assert tom == {
        "kind": "user",
        "id": "tom",
        "facts": 1,
        "turns": 2,
        "entries": 3,
        "last_at": tom["last_at"],
    }
    assert (wang["id"], wang["turns"], wang["facts"]) == ("王小明", 1, 0)
    assert (ana["id"], ana["facts"]) == ("ana", 1)
    assert datetime.fromisoformat(tom["last_at"]) > datetime.fromisoformat(wang["last_at"])
    agents = ok(as_alice.get(f"{API}/subjects", params={"kind": "agent"}))["subjects"]
    assert sorted(a["id"] for a in agents) == ["agent-1", "concierge"]  # not Bob's "spy"
    sessions = ok(as_alice.get(f"{API}/subjects", params={"kind": "session"}))["subjects"]
    assert sorted(s["id"] for s in sessions) == ["s/2", "session-1"]
    searched = ok(as_alice.get(f"{API}/subjects", params={"keywords": "小明"}))
    assert [p["id"] for p in searched["subjects"]] == ["王小明"] and searched["total_count"] == 1
    assert ok(as_alice.get(f"{API}/subjects", params={"keywords": "secret"}))["total_count"] == 0
    paged = ok(as_alice.get(f"{API}/subjects", params={"page": "2", "page_size": "2"}))
    assert [p["id"] for p in paged["subjects"]] == ["ana"] and paged["total_count"] == 3
    assert [p["id"] for p in ok(http(bob.key).get(f"{API}/subjects"))["subjects"]] == [
        "secret-user"
    ]


def test_a_scoped_key_lists_only_the_people_of_its_memories(
    as_alice: TestClient,
    http: Callable[[str | None], TestClient],
    engine: Engine,
    clock: FrozenClock,
    alice: Account,
    bob: Account,
) -> None:
    _, other = _seed(as_alice, http(bob.key), engine, clock)
    _, key = engine.create_api_key(alice.principal, alice.id, scope=[other])
    (tom,) = ok(http(key).get(f"{API}/subjects"))["subjects"]
    assert (tom["id"], tom["turns"], tom["facts"]) == ("tom", 1, 0)  # "notes" is out of scope


def test_a_key_that_may_not_read_lists_nobody(
    as_alice: TestClient,
    http: Callable[[str | None], TestClient],
    engine: Engine,
    clock: FrozenClock,
    alice: Account,
    bob: Account,
) -> None:
    _seed(as_alice, http(bob.key), engine, clock)
    _, blind = engine.create_api_key(alice.principal, alice.id, capabilities=["write"])
    for kind in ("user", "agent", "session"):
        found = ok(http(blind).get(f"{API}/subjects", params={"kind": kind}))
        assert found == {"subjects": [], "total_count": 0}, kind


def test_bad_input_names_the_field(as_alice: TestClient) -> None:
    assert "kind" in error(as_alice.get(f"{API}/subjects", params={"kind": "planet"}), 400, 101)
    refused = error(as_alice.get(f"{API}/subjects", params={"page_size": "101"}), 400, 101)
    assert "page_size" in refused
    tooling = error(as_alice.get(f"{API}/subjects", params={"keywords": "x" * 300}), 400, 101)
    assert "keywords" in tooling


def test_the_sdk_lists_people_and_reaches_odd_ids(
    as_alice: TestClient,
    http: Callable[[str | None], TestClient],
    engine: Engine,
    clock: FrozenClock,
    alice: Account,
    bob: Account,
    sdk: Sdk,
) -> None:
    notes, _ = _seed(as_alice, http(bob.key), engine, clock)
    for user in ODD:
        add_turn(as_alice, [notes], f"a turn of {user}", user_id=user)
    ms = sdk(alice.key)
    listed = ms.list_subjects(page_size=100)
    assert {p.id for p in listed.items} >= {*ODD, "tom", "ana", "王小明"}
    assert "secret-user" not in {p.id for p in listed.items}
    assert all(p.kind is SubjectKind.USER for p in listed.items)
    assert [p.id for p in ms.list_subjects("agent", keywords="CONCIERGE").items] == ["concierge"]
    for user in ODD:
        assert user in {p.id for p in ms.list_subjects(keywords=user).items}
        receipt = ms.forget_subject(user)
        assert (receipt.user_id, receipt.count, receipt.dry_run) == (user, 1, True), user


def test_people_are_found_by_any_case_in_any_script(
    engine: Engine, as_alice: TestClient, alice: Account
) -> None:
    memory = engine.create_memory(
        alice.principal, name="m", memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z"
    )
    for user in ("Борис", "Ärger", "tom"):
        engine.add_turn(
            alice.principal, [memory.id], user_input="hi", agent_response="ok", user_id=user
        )
    found = ok(as_alice.get(f"{API}/subjects", params={"keywords": "борис"}))["subjects"]
    assert [p["id"] for p in found] == ["Борис"]
    found = ok(as_alice.get(f"{API}/subjects", params={"keywords": "ärg"}))["subjects"]
    assert [p["id"] for p in found] == ["Ärger"]

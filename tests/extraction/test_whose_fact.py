"""Whose fact: three end users in one memory, and a chat model that answers "supersedes" or
"duplicate" for everything it is asked. No version link may cross users on any path; erasing
one user leaves the other two users' entries, searches and exports exactly as they were.

Runs on every store backend (the ``store`` fixture: SQLite and PostgreSQL)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.support.extraction import judgement, make_memory, say, scripted

from recallery import Conflict, Engine, InvalidInput, Memory, Principal, SearchRequest
from recallery.jobs import Worker
from recallery.models import Scope
from recallery.store.filters import EntryFilter
from recallery.store.rows import db_value
from recallery.testing import FakeLLM, FrozenClock

#: What each user says, in order, and the fact our extraction prompt would write for it.
TURNS: list[tuple[str, str, str]] = [
    ("maria", "I live in Lisbon.", "The user lives in Lisbon"),
    ("maria", "I like jazz.", "The user likes jazz"),
    ("tom", "I live in Manchester.", "The user lives in Manchester"),
    ("tom", "I like jazz too.", "The user likes jazz"),
    ("tom", "I work as a paramedic.", "The user works as a paramedic"),
    ("ana", "我住在巴伦西亚。", "The user lives in Valencia"),
    ("ana", "我喜欢爵士乐和弗拉明戈。", "用户 喜欢 爵士乐 和 弗拉明戈 (the user likes jazz)"),
    ("maria", "I moved to Porto.", "The user lives in Porto"),
]
FACT_OF = {said: fact for _, said, fact in TURNS}
#: What searching changes on an entry.
USE = {"last_used_at", "use_count"}


_reply = scripted(
    FACT_OF,
    lambda candidate: judgement("supersedes" if "lives in" in candidate else "duplicate_of", 1),
)
"""The chat model of the scenario: each turn's fact, and for every judgement asked,
"supersedes 1" for a home city and "duplicate of 1" for anything else."""


@pytest.fixture
def shared(
    engine: Engine, alice: Principal, llm: FakeLLM, worker: Worker, clock: FrozenClock
) -> Memory:
    """One support memory holding three customers' turns, extracted as they come."""
    memory = make_memory(engine, alice)
    llm.respond_with(_reply)
    for user, said, _ in TURNS:
        say(engine, alice, memory, said, user_id=user)
        worker.run_once()
        clock.advance(days=1)
    return memory


def _all(engine: Engine, memory: Memory) -> list[Any]:
    with engine.store.read() as r:
        found, _ = r.entries(Scope.of(memory.id), EntryFilter(current_only=False), limit=1000)
    return sorted(found, key=lambda e: e.message_id)


def _current_facts(engine: Engine, memory: Memory, user: str) -> set[str]:
    return {
        e.content
        for e in _all(engine, memory)
        if e.user_id == user and e.message_type.value == "semantic" and e.retired_at is None
    }


def _snapshot(engine: Engine, actor: Principal, memory: Memory, users: set[str]) -> Any:
    """Everything a caller can learn about ``users``: rows, searches and the export (use
    statistics left out: the searches here move them)."""
    exported = [
        json.dumps({k: v for k, v in r.items() if k not in USE}, sort_keys=True, default=str)
        for r in engine.export_memory(actor, memory.id)
        if r.get("user_id") in users
    ]
    rows = [
        (e.message_id, e.content, e.retired_at, e.superseded_by, e.supersedes, e.forget_at)
        for e in _all(engine, memory)
        if e.user_id in users
    ]
    searches = {
        (user, query): [
            h.entry.message_id
            for h in engine.search(
                actor,
                SearchRequest(query, (memory.id,), similarity_threshold=0.0, user_id=user),
            )
        ]
        for user in sorted(users)
        for query in ("where does the user live", "jazz", "job")
    }
    return rows, searches, exported


def test_no_version_link_crosses_users(engine: Engine, shared: Memory) -> None:
    entries = {e.message_id: e for e in _all(engine, shared)}
    for e in entries.values():
        for other in (e.supersedes, e.superseded_by):
            if other is not None:
                assert entries[other].user_id == e.user_id, (e.content, entries[other].content)
    # each person keeps their own current home city; maria's move retired only her Lisbon
    assert _current_facts(engine, shared, "maria") == {
        "The user likes jazz",
        "The user lives in Porto",
    }
    assert _current_facts(engine, shared, "tom") == {
        "The user lives in Manchester",
        "The user likes jazz",
        "The user works as a paramedic",
    }
    assert "The user lives in Valencia" in _current_facts(engine, shared, "ana")
    lisbon = next(e for e in entries.values() if e.content == "The user lives in Lisbon")
    assert entries[lisbon.superseded_by or 0].content == "The user lives in Porto"


def test_erasing_one_user_leaves_the_others_exactly_as_they_were(
    engine: Engine, alice: Principal, shared: Memory
) -> None:
    others = {"maria", "tom"}
    before = _snapshot(engine, alice, shared, others)
    preview = engine.erase_subject(alice, "ana")
    (share,) = preview.memories
    assert {c.user_id for c in share.items} == {"ana"}
    assert {c.why for c in share.items} <= {"own turn", "own entry", "derived", "older version"}
    anas = {e.message_id for e in _all(engine, shared) if e.user_id == "ana"}
    assert {c.message_id for c in share.items} == anas
    done = engine.erase_subject(alice, "ana", dry_run=False, token=preview.token)
    assert done.memories == preview.memories
    assert _snapshot(engine, alice, shared, others) == before
    assert not [e for e in _all(engine, shared) if e.user_id == "ana"]
    hits = engine.search(
        alice, SearchRequest("爵士乐 Valencia 巴伦西亚", (shared.id,), similarity_threshold=0.0)
    )
    assert not {h.entry.message_id for h in hits} & anas


def test_forgetting_a_user_takes_their_older_versions_so_reinstate_cannot_bring_one_back(
    engine: Engine, alice: Principal, shared: Memory
) -> None:
    lisbon = next(e for e in _all(engine, shared) if e.content == "The user lives in Lisbon")
    receipt = engine.forget_subject(alice, "maria", dry_run=False)
    (share,) = receipt.memories
    assert {c.why for c in share.items if c.message_id == lisbon.message_id} == {"older version"}
    engine.reinstate(alice, shared.id, lisbon.message_id, "checking the history")
    hits = engine.search(alice, SearchRequest("Lisbon", (shared.id,), similarity_threshold=0.0))
    assert lisbon.message_id not in {h.entry.message_id for h in hits}


def test_a_stale_dry_run_token_changes_nothing(
    engine: Engine, alice: Principal, shared: Memory, llm: FakeLLM, worker: Worker
) -> None:
    preview = engine.erase_subject(alice, "tom")
    say(engine, alice, shared, "I moved to Manchester city centre.", user_id="tom")
    held = len(_all(engine, shared))
    with pytest.raises(Conflict, match="changed since the dry run"):
        engine.erase_subject(alice, "tom", dry_run=False, token=preview.token)
    assert len(_all(engine, shared)) == held


def test_statements_compare_only_with_their_person(
    engine: Engine, alice: Principal, shared: Memory
) -> None:
    added = engine.add_entries(
        alice,
        shared.id,
        [{"message_type": "semantic", "content": "The user works as a paramedic"}],
        user_id="ana",
    )
    (outcome,) = added.outcomes
    # the same words as tom's fact, but not his: whatever the model says, only ana's entries
    # are candidates to repeat or replace
    owners = {e.message_id: e.user_id for e in _all(engine, shared)}
    assert outcome.target is None or owners[outcome.target] == "ana"
    assert "The user works as a paramedic" in _current_facts(engine, shared, "tom")
    tom_turn = next(e for e in _all(engine, shared) if e.user_id == "tom")
    with pytest.raises(InvalidInput, match="user 'tom'") as refused:
        engine.add_entries(
            alice,
            shared.id,
            [{"message_type": "semantic", "content": "The user is a nurse"}],
            user_id="ana",
            source_id=tom_turn.message_id,
        )
    assert refused.value.field == "user_id"


def test_the_store_refuses_a_link_between_two_people(engine: Engine, shared: Memory) -> None:
    entries = _all(engine, shared)
    toms = next(e for e in entries if e.user_id == "tom" and e.retired_at is None)
    marias = next(e for e in entries if e.user_id == "maria" and e.retired_at is None)
    with pytest.raises(Conflict, match=r"user 'tom'.*user 'maria'"), engine.store.write() as w:
        w.update_entries([marias.message_id], {"superseded_by": toms.message_id})
    assert {e.message_id: e.superseded_by for e in _all(engine, shared)}[marias.message_id] is None


def _legacy_link(engine: Engine, older: Any, newer: Any, at: Any) -> None:
    """A version link between two people, as an earlier release wrote them (the store's own
    guard bypassed)."""
    with engine.store.write() as w:
        w.conn.execute(
            "UPDATE entries SET superseded_by = ?, retired_at = ? WHERE message_id = ?",
            [newer.message_id, db_value(at), older.message_id],
        )
        w.conn.execute(
            "UPDATE entries SET supersedes = ? WHERE message_id = ?",
            [older.message_id, newer.message_id],
        )


def test_repair_undoes_links_an_earlier_release_wrote_between_people(
    engine: Engine, alice: Principal, shared: Memory, clock: FrozenClock
) -> None:
    entries = _all(engine, shared)
    toms = next(e for e in entries if e.content == "The user lives in Manchester")
    anas = next(e for e in entries if e.content == "The user lives in Valencia")
    _legacy_link(engine, toms, anas, clock.now())
    with pytest.raises(Conflict, match="two people"):
        engine.reinstate(alice, shared.id, toms.message_id, "tom still lives there")
    preview = engine.repair_links(alice)
    assert [(x.older, x.older_user, x.newer, x.newer_user) for x in preview.links] == [
        (toms.message_id, "tom", anas.message_id, "ana")
    ]
    assert "The user lives in Manchester" not in _current_facts(engine, shared, "tom")
    done = engine.repair_links(alice, dry_run=False, reason="links across users, issue 50")
    assert done.links == preview.links and done.links[0].reinstated
    after = {e.message_id: e for e in _all(engine, shared)}
    assert (after[toms.message_id].retired_at, after[toms.message_id].superseded_by) == (None, None)
    assert after[anas.message_id].supersedes is None and after[anas.message_id].retired_at is None
    assert "The user lives in Manchester" in _current_facts(engine, shared, "tom")
    events = engine.audit_log(alice, memory_id=shared.id, limit=1000).items
    repaired = {
        (e.message_id, e.action) for e in events if e.reason == "links across users, issue 50"
    }
    assert repaired == {(toms.message_id, "entry.reinstate"), (anas.message_id, "entry.unlink")}
    assert engine.repair_links(alice).links == ()
    # a key that may not review sees and changes nothing
    _, key = engine.create_api_key(alice, alice.user_id, capabilities=["read", "write"])
    _legacy_link(engine, toms, anas, clock.now())
    assert engine.repair_links(engine.authenticate(key), dry_run=False).links == ()
    assert after[toms.message_id].superseded_by is None
    assert {e.message_id: e for e in _all(engine, shared)}[toms.message_id].retired_at is not None


@pytest.mark.parametrize("path", ["one", "bulk", "subject"])
def test_erasure_never_follows_a_legacy_link_to_another_person(
    engine: Engine, alice: Principal, shared: Memory, clock: FrozenClock, path: str
) -> None:
    entries = _all(engine, shared)
    toms = next(e for e in entries if e.content == "The user lives in Manchester")
    anas = next(e for e in entries if e.content == "The user lives in Valencia")
    _legacy_link(engine, toms, anas, clock.now())
    if path == "one":
        erased = set(engine.erase(alice, shared.id, toms.message_id).erased)
    elif path == "bulk":
        done = engine.bulk(alice, shared.id, "erase", message_ids=[toms.message_id], dry_run=False)
        erased = set(done.changed)
    else:
        receipt = engine.erase_subject(alice, "tom", dry_run=False)
        erased = {c.message_id for m in receipt.memories for c in m.items}
    assert toms.message_id in erased and anas.message_id not in erased
    assert "The user lives in Valencia" in _current_facts(engine, shared, "ana")

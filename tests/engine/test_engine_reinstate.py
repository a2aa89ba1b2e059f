"""Reinstating a retired version (issue 40 item 5): a supersession judged wrong is undone,
audited with its reason; every backend."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest

from recallery import (
    Conflict,
    Engine,
    Forbidden,
    InvalidInput,
    Memory,
    NotFound,
    Principal,
    SearchRequest,
)
from recallery.models import Scope
from recallery.testing import FrozenClock


def _found(engine: Engine, actor: Principal, memory: Memory, query: str) -> set[int]:
    request = SearchRequest(query, (memory.id,), top_n=20, similarity_threshold=0.0)
    return {h.entry.message_id for h in engine.search(actor, request)}


def _turn(engine: Engine, actor: Principal, memory: Memory, text: str) -> int:
    (raw,) = engine.add_turn(actor, [memory.id], user_input=text, agent_response="ok")
    return raw.message_id


def _key(engine: Engine, owner: Principal, *capabilities: str) -> Principal:
    _, key = engine.create_api_key(owner, owner.user_id, capabilities=list(capabilities))
    return engine.authenticate(key)


def test_reinstate_makes_the_older_version_current_and_retires_the_newer(
    engine: Engine, alice: Principal, memory: Memory, clock: FrozenClock
) -> None:
    old = _turn(engine, alice, memory, "my dentist is Dr Silva")
    clock.advance(hours=1)
    new = engine.correct(alice, memory.id, old, "my dentist is Dr Costa").message_id
    assert _found(engine, alice, memory, "dentist") == {new}
    clock.advance(hours=1)

    back = engine.reinstate(alice, memory.id, old, "the correction was wrong")

    assert back.message_id == old and back.retired_at is None and back.superseded_by == new
    assert back.content.startswith("User Input: my dentist is Dr Silva")
    assert _found(engine, alice, memory, "dentist") == {old}
    newer, _ = engine.get_entry(alice, memory.id, new)
    assert newer.retired_at == clock.now() and newer.superseded_by == old
    for end in (old, new):
        assert [e.message_id for e in engine.history(alice, memory.id, end)] == [old, new]
    events = engine.audit_log(alice, memory_id=memory.id, limit=100).items
    mine = [(e.action, e.message_id, e.reason) for e in events if e.at == clock.now()]
    assert Counter(mine) == Counter(
        [
            ("entry.reinstate", old, "the correction was wrong"),
            ("entry.retire", new, "the correction was wrong"),
        ]
    )
    with pytest.raises(Conflict, match="is current already"):
        engine.reinstate(alice, memory.id, old, "again")


def test_reinstate_reopens_the_validity_supersession_closed(
    engine: Engine, alice: Principal, memory: Memory, clock: FrozenClock
) -> None:
    old = _turn(engine, alice, memory, "I live in Lisbon")
    new = _turn(engine, alice, memory, "I live in Porto")
    later = clock.now() + timedelta(hours=1)
    with engine.store.write() as w:  # what extraction's supersede writes
        w.update_entries([old], {"retired_at": later, "superseded_by": new, "invalid_at": later})
        w.update_entries([new], {"valid_at": later})
    clock.advance(hours=2)
    assert old not in _found(engine, alice, memory, "live")

    back = engine.reinstate(alice, memory.id, old, "Porto was a visit")

    assert back.invalid_at is None
    assert old in _found(engine, alice, memory, "live")
    assert new not in _found(engine, alice, memory, "live")


def test_reinstate_is_refused_without_the_capability_reason_or_memory(
    engine: Engine, alice: Principal, bob: Principal, memory: Memory
) -> None:
    old = _turn(engine, alice, memory, "my dentist is Dr Silva")
    new = engine.correct(alice, memory.id, old, "my dentist is Dr Costa").message_id
    writer = _key(engine, alice, "read", "write")
    with pytest.raises(Forbidden, match="'manage' capability"):
        engine.reinstate(writer, memory.id, old, "wrong")
    with pytest.raises(NotFound):
        engine.reinstate(bob, memory.id, old, "wrong")
    with pytest.raises(InvalidInput) as refused:
        engine.reinstate(alice, memory.id, old, "  ")
    assert refused.value.field == "reason"
    other = engine.create_memory(
        alice, name="other", memory_type=["raw"], embd_id=memory.embd_id, llm_id=memory.llm_id
    )
    with pytest.raises(NotFound):  # an entry of one memory, asked for through another
        engine.reinstate(alice, other.id, old, "wrong")
    with engine.store.read() as r:
        unchanged = r.get_entries(Scope.of(memory.id), [old, new])
    assert unchanged[old].retired_at is not None and unchanged[new].retired_at is None

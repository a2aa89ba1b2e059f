"""The lifecycle rules of DESIGN.md section 2, each shown with contrasting data."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray
from tests.support.engine import extracted, found, turn

from recallery import (
    Conflict,
    Engine,
    EntryType,
    Forbidden,
    Fusion,
    InvalidInput,
    Memory,
    NotFound,
    Origin,
    Principal,
    SearchRequest,
    Trust,
    TurnInput,
)
from recallery.models import Scope
from recallery.providers.registry import ModelRegistry
from recallery.store.base import Store
from recallery.testing import DeterministicEmbedder, FrozenClock


def audit_counts(
    engine: Engine, actor: Principal, memory: Memory
) -> Counter[tuple[str, int | None]]:
    events = engine.audit_log(actor, memory_id=memory.id, limit=1000).items
    return Counter((e.action, e.message_id) for e in events)


# --- invariant 2: hidden states are absent from a search that returns them before ----------


@pytest.mark.parametrize("operation", ["forget", "disable", "reject", "correct", "erase"])
def test_changed_entry_leaves_a_populated_search(
    engine: Engine, alice: Principal, memory: Memory, operation: str
) -> None:
    target = turn(engine, alice, memory, "my favourite colour is teal")
    other = turn(engine, alice, memory, "my favourite colour used to be red")
    turn(engine, alice, memory, "unrelated lunch plans")
    assert {target.message_id, other.message_id} <= found(engine, alice, memory, "favourite colour")
    if operation == "forget":
        engine.forget(alice, memory.id, target.message_id)
    elif operation == "disable":
        engine.set_status(alice, memory.id, target.message_id, False)
    elif operation == "reject":
        engine.review(alice, memory.id, target.message_id, "rejected")
    elif operation == "correct":
        engine.correct(alice, memory.id, target.message_id, "my favourite fruit is mango")
    else:
        engine.erase(alice, memory.id, target.message_id)
    after = found(engine, alice, memory, "favourite colour")
    assert target.message_id not in after
    assert other.message_id in after


def test_expired_entry_is_absent_now_but_found_when_it_was_valid(
    engine: Engine, alice: Principal, memory: Memory, clock: FrozenClock
) -> None:
    raw = turn(engine, alice, memory, "where do I live")
    start = clock.now()
    old = extracted(engine, raw, "the user lives in Lisbon", invalid_at=start + timedelta(days=1))
    new = extracted(engine, raw, "the user lives in Berlin", valid_at=start + timedelta(days=1))
    clock.advance(days=2)
    assert found(engine, alice, memory, "user lives") == {new, raw.message_id}
    earlier = found(engine, alice, memory, "user lives", valid_on=start + timedelta(hours=1))
    assert old in earlier and new not in earlier


def test_restore_and_enable_bring_entries_back(
    engine: Engine, alice: Principal, memory: Memory
) -> None:
    a = turn(engine, alice, memory, "the spare key is under the mat")
    engine.forget(alice, memory.id, a.message_id)
    engine.set_status(alice, memory.id, a.message_id, False)
    assert a.message_id not in found(engine, alice, memory, "spare key")
    engine.restore(alice, memory.id, a.message_id)
    assert a.message_id not in found(engine, alice, memory, "spare key")
    engine.set_status(alice, memory.id, a.message_id, True)
    assert a.message_id in found(engine, alice, memory, "spare key")


def test_forgetting_or_disabling_a_raw_turn_cascades_to_its_extracts(
    engine: Engine, alice: Principal, memory: Memory
) -> None:
    raw = turn(engine, alice, memory, "I adopted a cat named Miso")
    child = extracted(engine, raw, "user has a cat named Miso")
    unrelated_raw = turn(engine, alice, memory, "another cat story")
    unrelated = extracted(engine, unrelated_raw, "user likes the cat Pixel")
    assert {child, unrelated} <= found(engine, alice, memory, "cat")
    assert engine.forget(alice, memory.id, raw.message_id) == [raw.message_id, child]
    assert found(engine, alice, memory, "cat") == {unrelated_raw.message_id, unrelated}
    engine.restore(alice, memory.id, raw.message_id)
    engine.set_status(alice, memory.id, raw.message_id, False)
    assert found(engine, alice, memory, "cat") == {unrelated_raw.message_id, unrelated}
    events = audit_counts(engine, alice, memory)
    assert events[("entry.disable", child)] == 1 and events[("entry.forget", child)] == 1


def test_user_filter_separates_two_users_in_one_memory(
    engine: Engine, alice: Principal, memory: Memory
) -> None:
    mine = turn(engine, alice, memory, "my allergy is peanuts", user_id="u-1")
    theirs = turn(engine, alice, memory, "my allergy is shellfish", user_id="u-2")
    assert found(engine, alice, memory, "allergy") == {mine.message_id, theirs.message_id}
    assert found(engine, alice, memory, "allergy", user_id="u-1") == {mine.message_id}
    assert found(engine, alice, memory, "allergy", user_id="u-2") == {theirs.message_id}


def test_agent_session_and_type_filters(engine: Engine, alice: Principal, memory: Memory) -> None:
    a = turn(engine, alice, memory, "deploy notes", agent_id="ag1", session_id="s1")
    b = turn(engine, alice, memory, "deploy notes", agent_id="ag2", session_id="s1")
    c = turn(engine, alice, memory, "deploy notes", agent_id="ag1", session_id="s2")
    fact = extracted(engine, a, "deploy happens on fridays")
    assert found(engine, alice, memory, "deploy", agent_id="ag1") == {
        a.message_id,
        c.message_id,
        fact,
    }
    assert found(engine, alice, memory, "deploy", session_id="s1") == {
        a.message_id,
        b.message_id,
        fact,
    }
    semantic = frozenset({EntryType.SEMANTIC})
    assert found(engine, alice, memory, "deploy", types=semantic) == {fact}


# --- correction, history and the two clocks ----------------------------------------------


def test_correct_keeps_history_and_the_record_clock(
    engine: Engine, alice: Principal, memory: Memory, clock: FrozenClock
) -> None:
    old = turn(engine, alice, memory, "my dentist is Dr Silva")
    before = clock.now()
    clock.advance(hours=1)
    new = engine.correct(alice, memory.id, old.message_id, "my dentist is Dr Costa", reason="typo")
    assert new.supersedes == old.message_id and new.origin is Origin.CORRECTION
    history = engine.history(alice, memory.id, new.message_id)
    assert [e.message_id for e in history] == [old.message_id, new.message_id]
    assert history[0].retired_at == clock.now() and history[0].superseded_by == new.message_id
    assert found(engine, alice, memory, "dentist") == {new.message_id}
    assert found(engine, alice, memory, "dentist", as_of=before) == {old.message_id}
    with pytest.raises(Conflict):
        engine.correct(alice, memory.id, old.message_id, "again")
    events = audit_counts(engine, alice, memory)
    assert events[("entry.retire", old.message_id)] == 1
    assert events[("entry.correct", new.message_id)] == 1


def test_review_confirms_and_rejects(engine: Engine, alice: Principal, memory: Memory) -> None:
    a = turn(engine, alice, memory, "the wifi password is hunter2")
    assert engine.review(alice, memory.id, a.message_id, "confirmed").trust is Trust.CONFIRMED
    assert a.message_id in found(engine, alice, memory, "wifi password")
    engine.review(alice, memory.id, a.message_id, "rejected", reason="wrong")
    assert a.message_id not in found(engine, alice, memory, "wifi password")
    with pytest.raises(InvalidInput) as err:
        engine.review(alice, memory.id, a.message_id, "maybe")
    assert err.value.field == "verdict"


# --- invariant 3: exactly one audit event per change, committed with it --------------------


def test_every_change_has_exactly_one_audit_event(
    engine: Engine, alice: Principal, memory: Memory
) -> None:
    a = turn(engine, alice, memory, "alpha fact")
    engine.set_status(alice, memory.id, a.message_id, False)
    engine.set_status(alice, memory.id, a.message_id, False)  # no change, no event
    engine.set_status(alice, memory.id, a.message_id, True)
    engine.forget(alice, memory.id, a.message_id)
    engine.forget(alice, memory.id, a.message_id)  # already forgotten
    engine.restore(alice, memory.id, a.message_id)
    engine.review(alice, memory.id, a.message_id, "confirmed")
    # unchanged, but a verdict is a person's act: recorded again (the hostile-input round)
    engine.review(alice, memory.id, a.message_id, "confirmed")
    events = audit_counts(engine, alice, memory)
    expected = [
        "entry.add",
        "entry.disable",
        "entry.enable",
        "entry.forget",
        "entry.restore",
        "entry.confirm",
    ]
    assert {k: v for k, v in events.items() if k[1] == a.message_id} == {
        (action, a.message_id): 2 if action == "entry.confirm" else 1 for action in expected
    }


def test_a_refused_write_leaves_no_entry_and_no_event(engine: Engine, alice: Principal) -> None:
    small = engine.create_memory(
        alice, name="tiny", memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z", memory_size=300
    )
    before = audit_counts(engine, alice, small)
    with pytest.raises(Exception, match="budget"):
        turn(engine, alice, small, "x" * 400)
    assert audit_counts(engine, alice, small) == before
    assert engine.recent(alice, [small.id]) == []


# --- erase (invariant 6) ---------------------------------------------------------------------


def test_erase_cascades_and_leaves_no_trace(
    engine: Engine, alice: Principal, memory: Memory, tmp_path: Path
) -> None:
    secret = "Zanzibar-7741 is my bank PIN"
    raw = turn(engine, alice, memory, secret)
    child = extracted(engine, raw, "the bank PIN is Zanzibar-7741")
    keep = turn(engine, alice, memory, "my bank is on Main Street")
    corrected = engine.correct(alice, memory.id, child, "the bank PIN is Zanzibar-7741 (rotated)")
    receipt = engine.erase(alice, memory.id, raw.message_id, reason="user request")
    assert set(receipt.erased) == {raw.message_id, child, corrected.message_id}
    assert receipt.reason == "user request"
    # no API path returns it
    assert found(engine, alice, memory, "Zanzibar bank PIN") == {keep.message_id}
    for mid in receipt.erased:
        with pytest.raises(NotFound):
            engine.get_entry(alice, memory.id, mid)
    page = engine.list_messages(alice, memory.id)
    assert [e.message_id for e in page.items] == [keep.message_id]
    assert all("Zanzibar" not in e.content for e in engine.recent(alice, [memory.id], limit=100))
    # the audit log keeps the fact of erasure, never the text
    events = engine.audit_log(alice, memory_id=memory.id, limit=1000).items
    assert sum(e.action == "entry.erase" for e in events) == 3
    assert "Zanzibar" not in repr(events)
    with engine.store.read() as r:
        stones = r.tombstones(memory.id)
    assert {t.message_id for t in stones} == set(receipt.erased)
    # and the database files do not hold it (where the store has local files to read)
    engine.usage.flush()
    for file in engine.store.files():
        data = file.read_bytes()
        assert b"Zanzibar" not in data and b"zanzibar" not in data, file.name


def test_erase_is_owner_only_and_validates(
    engine: Engine, alice: Principal, bob: Principal
) -> None:
    shared = engine.create_memory(
        alice,
        name="shared",
        memory_type=["raw"],
        embd_id="x@Builtin",
        llm_id="y@Z",
        permissions="team",
    )
    engine.join_team(alice, alice.user_id, bob.user_id)
    member = engine.principal(bob.user_id)
    a = turn(engine, alice, shared, "team fact")
    with pytest.raises(Forbidden, match="only the owner"):
        engine.erase(member, shared.id, a.message_id)
    with pytest.raises(NotFound):
        engine.erase(alice, shared.id, 99999)
    with pytest.raises(InvalidInput):
        engine.erase(alice, shared.id, -1)


# --- writes ------------------------------------------------------------------------------------


def test_add_turn_stores_provenance_and_queues_extraction(
    engine: Engine, alice: Principal, clock: FrozenClock
) -> None:
    m = engine.create_memory(
        alice, name="x", memory_type=["raw", "semantic"], embd_id="x@Builtin", llm_id="y@Z"
    )
    when = clock.now() - timedelta(days=30)
    e = turn(
        engine,
        alice,
        m,
        "I moved to Porto",
        user_id="u",
        agent_id="a",
        session_id="s",
        conversation_time=when.isoformat(),
    )
    assert e.content == "User Input: I moved to Porto\nAgent Response: ok"
    assert (e.user_id, e.agent_id, e.session_id) == ("u", "a", "s")
    assert e.valid_at == when and e.recorded_at == clock.now()
    page = engine.list_messages(alice, m.id)
    assert page.jobs[e.message_id].kind == "extraction"


def test_raw_only_memory_queues_no_job(engine: Engine, alice: Principal, memory: Memory) -> None:
    e = turn(engine, alice, memory, "hello")
    assert engine.list_messages(alice, memory.id).jobs == {}
    assert e.message_type is EntryType.RAW


def test_writes_embed_in_one_batch_per_model(
    engine: Engine, alice: Principal, memory: Memory
) -> None:
    other = engine.create_memory(
        alice, name="two", memory_type=["raw"], embd_id="y@Builtin", llm_id="y@Z"
    )
    emb = engine.models.embedder("x@Builtin")
    emb.calls.clear()  # type: ignore[attr-defined]
    turns = [TurnInput(f"turn {i}") for i in range(5)]
    written = engine.add_messages(alice, [memory.id, other.id], turns)
    assert len(written) == 10 and emb.calls == [5]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("field", "kw"),
    [
        ("user_input", {"user_input": None}),
        ("user_input", {"user_input": "", "agent_response": " "}),
        ("agent_response", {"agent_response": 5}),
        ("user_input", {"user_input": "x" * (256 * 1024 + 1)}),
        ("user_id", {"user_id": "u" * 300}),
        ("conversation_time", {"conversation_time": "yesterday-ish"}),
        ("memory_id", {"memory_ids": []}),
        ("memory_id", {"memory_ids": ["not-an-id"]}),
        ("memory_id", {"memory_ids": ["a" * 32] * 101}),
    ],
)
def test_bad_turns_name_the_field_and_change_nothing(
    engine: Engine, alice: Principal, memory: Memory, field: str, kw: dict[str, object]
) -> None:
    values: dict[str, object] = {
        "memory_ids": [memory.id],
        "user_input": "hi",
        "agent_response": "ok",
    }
    values.update(kw)
    with pytest.raises(InvalidInput) as err:
        engine.add_turn(alice, values.pop("memory_ids"), **values)  # type: ignore[arg-type]
    assert err.value.field == field
    assert engine.recent(alice, [memory.id]) == []


def test_writing_to_an_inaccessible_memory_writes_nowhere(
    engine: Engine, alice: Principal, bob: Principal, memory: Memory
) -> None:
    bobs = engine.create_memory(
        bob, name="b", memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z"
    )
    with pytest.raises(NotFound):
        engine.add_turn(alice, [bobs.id, memory.id], user_input="hi", agent_response="ok")
    assert engine.recent(alice, [memory.id]) == []
    assert engine.recent(bob, [bobs.id]) == []


def test_recent_hides_forgotten_but_keeps_disabled(
    engine: Engine, alice: Principal, memory: Memory, clock: FrozenClock
) -> None:
    a = turn(engine, alice, memory, "first")
    clock.advance(minutes=1)
    b = turn(engine, alice, memory, "second")
    clock.advance(minutes=1)
    c = turn(engine, alice, memory, "third")
    engine.forget(alice, memory.id, a.message_id)
    engine.set_status(alice, memory.id, b.message_id, False)
    assert [e.message_id for e in engine.recent(alice, [memory.id])] == [c.message_id, b.message_id]
    assert len(engine.recent(alice, [memory.id], limit=1)) == 1


def test_get_entry_returns_the_vector(engine: Engine, alice: Principal, memory: Memory) -> None:
    a = turn(engine, alice, memory, "vector please")
    entry, vector = engine.get_entry(alice, memory.id, a.message_id)
    assert entry == a and vector is not None
    np.testing.assert_allclose(np.linalg.norm(vector), 1.0, rtol=1e-5)
    with engine.store.read() as r:
        assert r.entry(Scope(frozenset({memory.id})), a.message_id) == a


# --- neighbour context ------------------------------------------------------------------------


def test_a_turn_that_answers_in_context_rises_with_its_question(
    engine: Engine, alice: Principal, memory: Memory, clock: FrozenClock
) -> None:
    def say(text: str, session: str) -> int:
        clock.advance(seconds=1)
        (e,) = engine.add_messages(alice, [memory.id], [TurnInput(text, session_id=session)])
        return e.message_id

    say("Did you ever go hiking in the Alps?", "a")
    answer = say("Yes, we went last July and it rained.", "a")
    unrelated = say("Yes, the rain was heavy on the drive home.", "b")
    say("Anything else?", "b")
    # neighbour context alone: raw cosine fusion, no conversation windows
    only = {"fusion": Fusion.WEIGHTED, "context_weight": 0.0}
    base = SearchRequest(
        "hiking in the Alps rain",
        (memory.id,),
        top_n=10,
        similarity_threshold=0.0,
        neighbour_span=0,
        **only,  # type: ignore[arg-type]
    )
    with_context = SearchRequest(
        "hiking in the Alps rain",
        (memory.id,),
        top_n=10,
        similarity_threshold=0.0,
        **only,  # type: ignore[arg-type]
    )

    def rank(request: SearchRequest) -> list[int]:
        return [h.entry.message_id for h in engine.search(alice, request)]

    assert rank(base).index(answer) > rank(base).index(unrelated)
    assert rank(with_context).index(answer) < rank(with_context).index(unrelated)


#: Fixed vectors by a word of the text: cosines with the query "lighthouse" of 0 (the keeper,
#: which the keywords find), 0.5 (the beacon) and 0.1 (the bicycle).
PLANTED: dict[str, list[float]] = {
    "keeper": [0.0, 1.0, 0.0],
    "beacon": [0.5, 0.75**0.5, 0.0],
    "bicycle": [0.1, 0.0, 0.99**0.5],
    "lighthouse": [1.0, 0.0, 0.0],
}


class PlantedEmbedder(DeterministicEmbedder):
    """Vectors chosen per text (:data:`PLANTED`), not hashed."""

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        out = np.zeros((len(texts), self.dimension), np.float32)
        for row, text in enumerate(texts):
            word = next(w for w in PLANTED if w in text)
            out[row, :3] = PLANTED[word]
        return out


def test_the_default_threshold_admits_what_only_the_vectors_find(
    store: Store, clock: FrozenClock
) -> None:
    engine = Engine(store, models=ModelRegistry(builtin=PlantedEmbedder), clock=clock)
    alice = engine.principal(engine.create_user("alice").id)
    memory = engine.create_memory(alice, name="m", memory_type=["raw"], embd_id="x@Builtin",
                                  llm_id="none@None")  # fmt: skip
    keeper = turn(engine, alice, memory, "the lighthouse keeper waved").message_id
    beacon = turn(engine, alice, memory, "a tall beacon by the sea").message_id
    turn(engine, alice, memory, "bicycle repair on sunday")

    def hits(**kw: object) -> set[int]:
        request = SearchRequest("lighthouse", (memory.id,), **kw)  # type: ignore[arg-type]
        return {h.entry.message_id for h in engine.search(alice, request)}

    try:  # the SDK's defaults: threshold 0.2, keyword weight 0.7
        assert hits() == {keeper, beacon}
        assert hits(keywords_similarity_weight=1.0) == {keeper}
        assert hits(keywords_similarity_weight=0.0) == {beacon}
    finally:
        engine.usage.close()


def test_context_never_admits_an_entry_below_the_threshold(
    engine: Engine, alice: Principal, memory: Memory
) -> None:
    hit = turn(engine, alice, memory, "green tea every morning")
    turn(engine, alice, memory, "bicycle repair on sunday")
    found_ids = found(engine, alice, memory, "green tea")
    request = SearchRequest("green tea", (memory.id,), similarity_threshold=0.3)
    assert [h.entry.message_id for h in engine.search(alice, request)] == [hit.message_id]
    assert hit.message_id in found_ids

"""The data-subject request path at the engine: forget or erase everything about one end user
across the memories the caller may change, the dry run's receipt first; and a person's page."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import pytest
from tests.support.engine import extracted, found, turn

from recallery import Engine, InvalidInput, Memory, Principal
from recallery.models import Scope
from recallery.requests.subjects import SubjectAction, SubjectReceipt
from recallery.store.filters import EntryFilter

TOM_SECRET = "Quokka-5521 is Tom's locker code"
ANN_FACT = "Ann keeps bees in Vermont"
TOM_BIKE = "Tom parks his bike at Gate 9"


@dataclass(frozen=True)
class World:
    mine: Memory  # alice's, holding Tom and Ann
    second: Memory  # alice's too
    bobs: Memory  # Bob's, shared with his team (alice can write, not erase)
    alice: Principal  # alice as a member of Bob's team
    tom: set[int]  # Tom's entries in alice's memories, with their cascade
    ann: set[int]


def _memory(engine: Engine, owner: Principal, name: str, **kw: object) -> Memory:
    return engine.create_memory(
        owner, name=name, memory_type=["raw", "semantic"], embd_id="x@Builtin", llm_id="y@Z", **kw
    )


@pytest.fixture
def world(engine: Engine, alice: Principal, bob: Principal) -> World:
    mine, second = _memory(engine, alice, "mine"), _memory(engine, alice, "second")
    bobs = _memory(engine, bob, "bobs", permissions="team")
    engine.join_team(bob, bob.user_id, alice.user_id)
    tom: set[int] = set()
    ann: set[int] = set()
    for m in (mine, second):
        raw = turn(engine, alice, m, TOM_SECRET, user_id="tom")
        fact = extracted(engine, raw, "Tom's locker code is Quokka-5521")
        fixed = engine.correct(alice, m.id, fact, "Tom's locker code is Quokka-5521 (new)")
        anonymous = extracted(engine, raw, "a locker code was shared", user_id="")
        tom |= {raw.message_id, fact, fixed.message_id, anonymous}
        other = turn(engine, alice, m, ANN_FACT, user_id="ann")
        ann |= {other.message_id, extracted(engine, other, "Ann keeps bees")}
    turn(engine, bob, bobs, TOM_BIKE, user_id="tom")
    return World(mine, second, bobs, engine.principal(alice.user_id), tom, ann)


def _ids(r: SubjectReceipt) -> set[int]:
    return {i for m in r.memories for i in (*m.entries, *m.cascade)}


def _held(engine: Engine, actor: Principal, *memories: Memory) -> set[int]:
    """Every entry the store holds in ``memories``, in any state."""
    for m in memories:
        engine.get_memory(actor, m.id)  # the caller may read them
    scope = Scope(frozenset(m.id for m in memories))
    with engine.store.read() as r:
        return set(r.entry_ids(scope, EntryFilter(current_only=False)))


def test_erase_a_user_across_memories_leaves_the_other_untouched(
    engine: Engine, alice: Principal, bob: Principal, world: World
) -> None:
    preview = engine.erase_subject(world.alice, "tom", reason="GDPR request 17")
    assert preview.dry_run and _ids(preview) == world.tom
    assert _held(engine, world.alice, world.mine, world.second) >= world.tom  # nothing changed yet
    # one share per memory: Tom's raw turn and fact versions his, the anonymous extract cascade
    assert {m.memory_id for m in preview.memories} == {world.mine.id, world.second.id}
    assert preview.entries == 6 and preview.cascade == 2 and preview.count == 8
    # Bob's team memory holds Tom too, but only its owner may erase there
    (refused,) = preview.refused
    assert (refused.memory_id, refused.held) == (world.bobs.id, 1)
    assert "only the owner" in refused.reason

    done = engine.erase_subject(world.alice, "tom", dry_run=False, reason="GDPR request 17")
    assert not done.dry_run
    assert (done.memories, done.refused) == (preview.memories, preview.refused)
    # Ann untouched, Tom gone from every path
    assert _held(engine, world.alice, world.mine, world.second) == world.ann
    assert found(engine, world.alice, world.mine, "locker code Quokka") <= world.ann
    assert found(engine, world.alice, world.mine, "bees Vermont")
    assert found(engine, bob, world.bobs, "bike Gate")  # the refused memory kept Tom's turn
    events = [
        e
        for m in (world.mine, world.second)
        for e in engine.audit_log(world.alice, memory_id=m.id, limit=1000).items
        if e.action == "entry.erase"
    ]
    assert Counter(e.message_id for e in events) == Counter(world.tom)
    assert {e.reason for e in events} == {"GDPR request 17"}
    assert engine.erase_subject(world.alice, "tom").count == 0
    engine.usage.flush()
    for file in engine.store.files():
        data = file.read_bytes()
        assert b"Quokka" not in data and b"quokka" not in data, file.name


def test_forget_a_user_hides_them_and_audits_each_entry(
    engine: Engine, alice: Principal, bob: Principal, world: World
) -> None:
    preview = engine.forget_subject(world.alice, "tom")
    # alice may write Bob's team memory: it is changed too, the team's rules allow it; in
    # each of hers: Tom's turn, his fact, its older version and the extract of his turn
    current = {world.mine.id: 4, world.second.id: 4, world.bobs.id: 1}
    assert {m.memory_id: m.count for m in preview.memories} == current
    assert not preview.refused
    done = engine.forget_subject(world.alice, "tom", dry_run=False)
    assert done.memories == preview.memories and done.action is SubjectAction.FORGET
    for m in (world.mine, world.second, world.bobs):
        assert not found(engine, world.alice, m, "locker code Quokka bike Gate") & world.tom
    assert found(engine, world.alice, world.mine, "bees Vermont")
    forgotten = [
        e
        for m in (world.mine, world.second, world.bobs)
        for e in engine.audit_log(world.alice, memory_id=m.id, limit=1000).items
        if e.action == "entry.forget"
    ]
    assert sorted(e.message_id for e in forgotten) == sorted(_ids(done))
    assert engine.forget_subject(world.alice, "tom").count == 0  # nothing left to forget


def test_a_key_that_may_not_change_a_memory_leaves_it_untouched(
    engine: Engine, alice: Principal, world: World
) -> None:
    _, key = engine.create_api_key(world.alice, world.alice.user_id, capabilities=["read"])
    reader = engine.authenticate(key)
    before = _held(engine, world.alice, world.mine, world.second)
    for request in (engine.forget_subject, engine.erase_subject):
        receipt = request(reader, "tom", dry_run=False)
        assert receipt.count == 0 and not receipt.memories
        assert {r.memory_id for r in receipt.refused} == {
            world.mine.id,
            world.second.id,
            world.bobs.id,
        }
        assert all("lacks the" in r.reason for r in receipt.refused)
    assert _held(engine, world.alice, world.mine, world.second) == before
    # a key scoped to one memory changes only that one
    toms_in_mine = world.tom & _held(engine, world.alice, world.mine)
    _, scoped_key = engine.create_api_key(world.alice, world.alice.user_id, scope=[world.second.id])
    done = engine.erase_subject(engine.authenticate(scoped_key), "tom", dry_run=False)
    assert {m.memory_id for m in done.memories} == {world.second.id}
    assert toms_in_mine and toms_in_mine <= _held(engine, world.alice, world.mine)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"user_id": ""}, "user_id"), ({"user_id": 7}, "user_id"), ({"dry_run": "no"}, "dry_run")],
)
def test_bad_requests_name_their_field(
    engine: Engine, alice: Principal, kwargs: dict[str, object], field: str
) -> None:
    values: dict[str, object] = {"user_id": "tom", **kwargs}
    with pytest.raises(InvalidInput) as caught:
        engine.erase_subject(alice, values.pop("user_id"), **values)  # type: ignore[arg-type]
    assert caught.value.field == field


def test_a_profile_counts_what_the_caller_may_read(
    engine: Engine, alice: Principal, bob: Principal, world: World
) -> None:
    tom = engine.subject_profile(world.alice, "user", "tom")
    assert {m.memory_id: m.total for m in tom.memories} == {
        world.mine.id: 3,  # the turn and both versions of the fact (the anonymous one is not his)
        world.second.id: 3,
        world.bobs.id: 1,
    }
    assert {f.content for f in tom.facts} == {"Tom's locker code is Quokka-5521 (new)"}
    assert sum(tom.per_day) == 7 and len(tom.days) == len(tom.per_day)
    assert engine.subject_profile(bob, "user", "tom").total == 1  # Bob cannot read alice's
    assert engine.subject_profile(world.alice, "user", "nobody").total == 0
    with pytest.raises(InvalidInput):
        engine.subject_profile(world.alice, "planet", "mars")

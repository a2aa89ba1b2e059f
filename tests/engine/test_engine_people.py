"""The People listing at the engine, on both backends: the end users, agents and sessions of
the memories a caller may read, with their counts of facts and turns and last activity,
searched by a part of the id and paged. Every test seeds ids that must stay out: one only in
a memory the caller cannot read, one outside a scoped key."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from tests.support.engine import extracted, turn

from recallery import Engine, InvalidInput, Memory, Principal
from recallery.requests.subjects import SubjectKind
from recallery.testing import FrozenClock

#: Ids as people type them: a path, a query, a fragment, dots, spaces, Chinese, Cyrillic.
ODD = ("tom/1?x=2#top", "..", "a b", "李雷", "Мария")


@dataclass(frozen=True)
class World:
    notes: Memory  # alice's: tom, ana, 王小明, with facts
    other: Memory  # alice's too: tom again
    hidden: Memory  # bob's private memory: only "secret-user"


def _memory(engine: Engine, owner: Principal, name: str) -> Memory:
    return engine.create_memory(
        owner, name=name, memory_type=["raw", "semantic"], embd_id="x@Builtin", llm_id="y@Z"
    )


@pytest.fixture
def world(engine: Engine, alice: Principal, bob: Principal, clock: FrozenClock) -> World:
    notes, other = _memory(engine, alice, "notes"), _memory(engine, alice, "other")
    hidden = _memory(engine, bob, "hidden")
    said = (
        ("tom", "I live in Manchester", "helper", "s-1"),
        ("ana", "Vivo en Valencia", "helper", "s-2"),
        ("王小明", "我住在北京", "concierge", "s-3"),
    )
    for user, text, agent, session in said:
        clock.advance(minutes=1)
        raw = turn(engine, alice, notes, text, user_id=user, agent_id=agent, session_id=session)
        extracted(engine, raw, f"fact of {user}")
    clock.advance(minutes=1)
    ana_turn = turn(engine, alice, notes, "Me gusta el jazz", user_id="ana", session_id="s-2")
    fixed = extracted(engine, ana_turn, "ana likes jazz")
    engine.correct(alice, notes.id, fixed, "ana likes jazz and flamenco")  # one retired version
    clock.advance(minutes=1)
    turn(engine, alice, other, "Back in Leeds now", user_id="tom", agent_id="helper")
    turn(engine, bob, hidden, "Bob's customer", user_id="secret-user", agent_id="spy")
    return World(notes, other, hidden)


def _ids(engine: Engine, actor: Principal, kind: str = "user", **kw: object) -> list[str]:
    return [p.id for p in engine.list_subjects(actor, kind, **kw).items]


def test_users_of_readable_memories_with_counts_newest_first(
    engine: Engine, alice: Principal, world: World
) -> None:
    found = engine.list_subjects(alice)
    assert found.total == 3
    tom, ana, wang = found.items  # tom wrote last (in "other"), then ana's second turn
    assert (tom.id, tom.kind, tom.turns, tom.facts) == ("tom", SubjectKind.USER, 2, 1)
    assert tom.entries == 3
    # ana: two turns, two current facts; the corrected version is retired, not counted
    assert (ana.id, ana.turns, ana.facts, ana.entries) == ("ana", 2, 2, 5)
    assert (wang.id, wang.turns, wang.facts) == ("王小明", 1, 1)
    assert tom.last_at > ana.last_at > wang.last_at
    assert "secret-user" not in _ids(engine, alice)  # only in Bob's private memory


def test_agents_and_sessions_are_listed_the_same_way(
    engine: Engine, alice: Principal, bob: Principal, world: World
) -> None:
    assert sorted(_ids(engine, alice, "agent")) == ["concierge", "helper"]
    assert sorted(_ids(engine, alice, "session")) == ["s-1", "s-2", "s-3"]
    assert _ids(engine, bob, "agent") == ["spy"] and _ids(engine, bob) == ["secret-user"]


def test_search_is_a_literal_part_of_the_id_in_any_case(
    engine: Engine, alice: Principal, world: World
) -> None:
    assert _ids(engine, alice, keywords="TO") == ["tom"]
    assert _ids(engine, alice, keywords="小明") == ["王小明"]
    assert _ids(engine, alice, keywords="%") == [] and _ids(engine, alice, keywords="_") == []
    assert _ids(engine, alice, keywords="secret") == []
    assert sorted(_ids(engine, alice, keywords="  ")) == ["ana", "tom", "王小明"]


def test_pages_split_the_list_and_keep_the_total(
    engine: Engine, alice: Principal, world: World
) -> None:
    pages = [engine.list_subjects(alice, page=n, page_size=2) for n in (1, 2, 3)]
    assert [p.total for p in pages] == [3, 3, 3]
    assert [[x.id for x in p.items] for p in pages] == [["tom", "ana"], ["王小明"], []]


def test_a_scoped_key_sees_only_the_people_of_its_memories(
    engine: Engine, alice: Principal, world: World
) -> None:
    _, key = engine.create_api_key(alice, alice.user_id, scope=[world.other.id])
    scoped = engine.authenticate(key)
    assert _ids(engine, scoped) == ["tom"]
    (tom,) = engine.list_subjects(scoped).items
    assert (tom.turns, tom.facts) == (1, 0)  # tom's entries in "notes" are out of scope
    _, blind = engine.create_api_key(alice, alice.user_id, capabilities=["write"])
    assert engine.list_subjects(engine.authenticate(blind)).total == 0  # may not read: nobody


def test_odd_ids_come_back_exactly(engine: Engine, alice: Principal, world: World) -> None:
    for i, user in enumerate(ODD):
        turn(engine, alice, world.other, f"turn {i}", user_id=user)
    listed = set(_ids(engine, alice, page_size=100))
    assert listed >= set(ODD)
    for user in ODD:
        assert user in _ids(engine, alice, keywords=user)
        assert engine.subject_profile(alice, "user", user).total == 1


@pytest.mark.parametrize(
    ("field", "kw"),
    [
        ("kind", {"kind": "planet"}),
        ("page", {"page": 0}),
        ("page_size", {"page_size": 101}),
        ("page_size", {"page_size": "ten"}),
        ("keywords", {"keywords": "x" * 300}),
    ],
)
def test_bad_input_names_its_field(
    engine: Engine, alice: Principal, field: str, kw: dict[str, object]
) -> None:
    with pytest.raises(InvalidInput) as refused:
        engine.list_subjects(alice, **kw)  # type: ignore[arg-type]
    assert refused.value.field == field

"""Supersession of raw turns (issue 42): the slots a user's statements fill, the links a
restated slot writes, and what search and the context block make of them. Links never
cross memories or users, an erased turn leaves none, and a filter still excludes."""

from __future__ import annotations

import pytest

from recallery import Engine, SearchRequest
from recallery.models import Memory, Principal
from recallery.requests import TurnInput
from recallery.retrieval.fusion import Scored
from recallery.retrieval.supersede import EPSILON, with_superseding
from recallery.store.base import Store
from recallery.testing import FrozenClock
from recallery.text.slots import slots, superseded

ON = {"supersession": 1.0, "top_n": 10, "similarity_threshold": 0.0}


@pytest.mark.parametrize(
    ("text", "slot", "value"),
    [
        ("I live in the Plateau, Montreal.", "home", "the plateau"),
        ("Big news: we're moving into our new flat in the Annex, Toronto!", "home", "the annex"),
        ("I'm relocating to Auckland next month", "home", "auckland next month"),
        ("I work as a nurse at St Mary's.", "work", "a nurse at st mary's"),
        ("Teal is my favourite colour.", "favourite colour", "teal"),
        ("my favourite film is Alien", "favourite film", "alien"),
        ("My name is Ada", "name", "ada"),
        ("I have 3 cats", "have cats", "3"),
    ],
)
def test_a_first_person_statement_fills_a_slot(text: str, slot: str, value: str) -> None:
    assert slots(f"User Input: {text}\nAgent Response: I live in Paris.").get(slot) == value


def test_the_agent_response_and_other_people_fill_no_slot() -> None:
    assert slots("User Input: What a nice day.\nAgent Response: I live in Paris.") == {}
    assert slots("User Input: The weather in Lisbon is lovely.") == {}


def test_a_new_value_supersedes_and_the_same_value_does_not() -> None:
    assert superseded({"home": "lisbon"}, {"home": "porto"})
    assert not superseded({"home": "lisbon"}, {"home": "lisbon"})
    assert not superseded({"home": "lisbon"}, {"work": "a nurse"})


def test_the_newer_turn_is_placed_just_above_the_older() -> None:
    ranked = [Scored(1, 0.9, 0.5, 0.5), Scored(2, 0.8, 0.5, 0.5), Scored(3, 0.1, 0.0, 0.1)]
    out = with_superseding(ranked, {1: 9, 2: 3}, weight=1.0, limit=3)
    assert [s.message_id for s in out] == [9, 1, 3]
    assert out[0].score == pytest.approx(0.9 + EPSILON)
    assert with_superseding(ranked, {1: 9}, weight=0.0) == ranked


# --- the engine and the store -----------------------------------------------------------------


def said(engine: Engine, actor: Principal, memory: Memory, text: str, user: str = "u1") -> int:
    turn = TurnInput(f"User Input: {text}\nAgent Response: Noted, thanks.", user_id=user)
    (e,) = engine.add_messages(actor, [memory.id], [turn])
    return int(e.message_id)


def links(store: Store, *ids: int) -> dict[int, int]:
    with store.read() as r:
        return r.superseding(ids)


def found(engine: Engine, actor: Principal, memory: Memory, query: str, **kw: object) -> list[int]:
    request = SearchRequest(query, (memory.id,), **(ON | kw))  # type: ignore[arg-type]
    return [h.entry.message_id for h in engine.search(actor, request)]


def test_a_restated_slot_is_linked_and_an_unrelated_turn_is_not(
    engine: Engine, store: Store, alice: Principal, memory: Memory, clock: FrozenClock
) -> None:
    old = said(engine, alice, memory, "I live in the Plateau, Montreal.")
    clock.advance(days=2)
    other = said(engine, alice, memory, "I work as a nurse at St Mary's.")
    clock.advance(days=2)
    new = said(engine, alice, memory, "We're moving into our new flat in the Annex, Toronto!")
    assert links(store, old, other, new) == {old: new}


def test_supersession_is_on_by_default_and_a_query_about_the_past_keeps_the_older_first(
    engine: Engine, alice: Principal, memory: Memory, clock: FrozenClock
) -> None:
    old = said(engine, alice, memory, "I live in the Plateau, Montreal.")
    clock.advance(days=2)
    new = said(engine, alice, memory, "We're moving into our new flat in the Annex, Toronto!")
    defaults = SearchRequest("Plateau Montreal", (memory.id,), top_n=10, similarity_threshold=0)
    assert [h.entry.message_id for h in engine.search(alice, defaults)][:2] == [new, old]
    for past in ("where did I live first, Plateau Montreal", "back when: Plateau Montreal"):
        assert found(engine, alice, memory, past)[0] == old, past


def test_the_superseding_turn_is_found_and_the_block_marks_the_older(
    engine: Engine, alice: Principal, memory: Memory, clock: FrozenClock
) -> None:
    old = said(engine, alice, memory, "I live in the Plateau, Montreal.")
    clock.advance(days=2)
    new = said(engine, alice, memory, "We're moving into our new flat in the Annex, Toronto!")
    got = found(engine, alice, memory, "Plateau Montreal")
    assert got.index(new) < got.index(old)
    assert found(engine, alice, memory, "Plateau Montreal", supersession=0.0)[0] == old
    request = SearchRequest("Plateau Montreal", (memory.id,), **ON)  # type: ignore[arg-type]
    assert f"id:{old} type:raw" in (block := engine.context(alice, request).text)
    assert f"older-than:id:{new}" in block


def test_links_never_cross_users_or_memories(
    engine: Engine,
    store: Store,
    alice: Principal,
    bob: Principal,
    memory: Memory,
    clock: FrozenClock,
) -> None:
    theirs = engine.create_memory(
        bob, name="bob's", memory_type=["raw"], embd_id=memory.embd_id, llm_id=memory.llm_id
    )
    old = said(engine, alice, memory, "I live in Lisbon.")
    clock.advance(days=2)
    other_user = said(engine, alice, memory, "I live in Porto.", user="u2")
    other_memory = said(engine, bob, theirs, "I live in Berlin.")
    assert links(store, old, other_user, other_memory) == {}
    assert found(engine, alice, memory, "Lisbon", user_id="u1") == [old]


def test_a_filter_still_excludes_the_superseding_turn(
    engine: Engine, store: Store, alice: Principal, memory: Memory, clock: FrozenClock
) -> None:
    old = said(engine, alice, memory, "I live in Lisbon.", user="u1")
    clock.advance(days=2)
    new = said(engine, alice, memory, "I moved to Porto.", user="u1")
    assert links(store, old) == {old: new}
    assert new not in found(engine, alice, memory, "Lisbon", session_id="elsewhere")
    assert found(engine, alice, memory, "Lisbon", types=["semantic"]) == []


def test_an_erased_turn_leaves_no_link(
    engine: Engine, store: Store, alice: Principal, memory: Memory, clock: FrozenClock
) -> None:
    old = said(engine, alice, memory, "I live in Lisbon.")
    clock.advance(days=2)
    new = said(engine, alice, memory, "I moved to Porto.")
    engine.erase(alice, memory.id, new)
    assert links(store, old) == {}
    with store.read() as r:
        left = r.conn.execute(
            "SELECT count(*) FROM supersessions WHERE older = ? OR newer = ?", [new, new]
        )
        slotted = r.conn.execute("SELECT count(*) FROM turn_slots WHERE message_id = ?", [new])
    assert int(left[0][0]) == 0 and int(slotted[0][0]) == 0
    assert found(engine, alice, memory, "Lisbon") == [old]

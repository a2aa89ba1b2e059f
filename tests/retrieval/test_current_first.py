"""The current fact first (issue 42): time in the ranking, context that adapts to a turn's
length, and the context block's staleness marks. Pure functions first, then the engine's
invariants with the mechanisms on: filters still exclude, erased turns leave no trace,
nothing crosses memories."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from recallery import Engine, SearchRequest
from recallery.models import Entry, EntryType, Hit, Memory, Principal
from recallery.requests import TurnInput
from recallery.retrieval.adaptive import context_shares
from recallery.retrieval.context import assemble, staleness
from recallery.retrieval.fusion import Scored, rank, score
from recallery.retrieval.recency import (
    asks_state,
    band_lean,
    time_lean,
    with_recency,
    with_time_band,
)
from recallery.testing import FrozenClock

T0 = datetime(2025, 1, 1, tzinfo=UTC)
ON = {"recency_weight": 0.5, "context_length": 200}


# --- time in the ranking (pure) ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "lean"),
    [
        ("Where do I live now?", 2.0),
        ("Which car do I currently drive?", 2.0),
        ("Do I still play the violin?", 2.0),
        ("Where did I live first?", -1.0),
        ("What was my job originally?", -1.0),
        ("Where did I live back when I was a student?", 0.0),
        ("What did I eat in 2019?", 0.0),
        ("Where do I live?", 1.0),
    ],
)
def test_the_query_leans_the_prior(query: str, lean: float) -> None:
    assert time_lean(query) == lean


def scored(*scores: float) -> list[Scored]:
    return [Scored(i, s, 0.0, 0.0) for i, s in enumerate(scores, start=1)]


def times(*days: int) -> dict[int, tuple[datetime, int]]:
    return {i: (T0 + timedelta(days=d), i) for i, d in enumerate(days, start=1)}


def test_the_later_of_two_close_candidates_wins() -> None:
    ranked = scored(1.0, 0.9)  # 1 is the older, and a little better
    order = with_recency(ranked, times(0, 10), weight=0.3)
    assert [s.message_id for s in order] == [2, 1]


def test_asking_for_the_beginning_turns_the_prior_round() -> None:
    ranked = scored(0.9, 1.0)  # 2 is the newer, and a little better
    order = with_recency(ranked, times(0, 10), weight=0.3, lean=time_lean("my first job?"))
    assert [s.message_id for s in order] == [1, 2]


def test_the_prior_orders_by_valid_time_not_by_id() -> None:
    ranked = scored(1.0, 0.9)  # 2 was written later but holds earlier (backdated)
    order = with_recency(ranked, times(10, 0), weight=0.3)
    assert [s.message_id for s in order] == [1, 2]


def test_the_prior_never_lifts_what_does_not_match() -> None:
    ranked = scored(1.0, 0.0)
    order = with_recency(ranked, times(0, 10), weight=1.0)
    assert [(s.message_id, s.score) for s in order] == [(1, 1.0), (2, 0.0)]


def test_without_weight_or_lean_the_ranking_stands() -> None:
    ranked = scored(1.0, 0.9, 0.8)
    assert with_recency(ranked, times(0, 1, 2), weight=0.0) == ranked
    assert with_recency(ranked, times(0, 1, 2), weight=0.5, lean=0.0) == ranked
    assert with_recency(ranked, times(0, 1, 2), weight=0.5, limit=2) == [
        replace(s, score=s.score * f) for s, f in ((ranked[2], 1.5), (ranked[1], 1.25))
    ]


# --- time orders the band of a question about the present (pure) ------------------------------


@pytest.mark.parametrize(
    ("query", "state"),
    [
        ("Where do I live?", True),
        ("what car do I have", True),
        ("Remind me, which instrument am I learning?", True),
        ("Where did I live?", False),  # the past tense asks about an event
        ("Where does Tom live?", False),  # about someone else
        ("I moved last year. Where do I live?", False),  # two sentences: a dialogue
        ("What do I " + "really " * 30 + "like?", False),  # too long for one question
    ],
)
def test_a_question_about_the_askers_state(query: str, state: bool) -> None:
    assert asks_state(query) is state


@pytest.mark.parametrize(
    ("query", "lean"),
    [
        ("Where do I live?", 1.0),
        ("Where does Tom live now?", 2.0),
        ("What was my first car?", -1.0),
        ("Where does Tom live?", 0.0),
        ("Where did I live in 2019?", 0.0),
        ("I feel great now. Shall we plan the weekend?", 0.0),  # a dialogue's "now"
    ],
)
def test_which_way_time_orders_the_band(query: str, lean: float) -> None:
    assert band_lean(query) == lean


def test_the_band_puts_close_candidates_latest_first_and_keeps_their_scores() -> None:
    # 1 the old canonical statement, 2 the later change (close enough), 3 the latest but far
    ranked = scored(1.0, 0.5, 0.1)
    order = with_time_band(ranked, times(0, 5, 9), band=0.7, lean=1.0, window=10)
    assert [(s.message_id, s.score) for s in order] == [(2, 0.5), (1, 1.0), (3, 0.1)]
    earliest = with_time_band(ranked[::-1], times(0, 5, 9), band=1.0, lean=-1.0, window=10)
    assert [s.message_id for s in earliest] == [1, 2, 3]


def test_the_band_orders_each_persons_turns_among_their_own_places() -> None:
    """Ann's violin (1, first written), Tom's later loud music (2, the latest), Ann's later
    guitar (3): time moves Ann's turns within Ann's places; Tom's keeps its own."""
    ranked = scored(1.0, 0.9, 0.8)
    when = times(0, 9, 5)
    people = {1: ("m", "ann"), 2: ("m", "tom"), 3: ("m", "ann")}
    anyone = with_time_band(ranked, when, band=0.7, lean=1.0, window=10)
    assert [s.message_id for s in anyone] == [2, 3, 1]
    theirs = with_time_band(ranked, when, band=0.7, lean=1.0, window=10, people=people)
    assert [s.message_id for s in theirs] == [3, 2, 1]
    # the same user id in two memories is two people
    apart = {1: ("m", "ann"), 2: ("m2", "ann"), 3: ("m", "ann")}
    assert [s.message_id for s in with_time_band(ranked, when, band=0.7, lean=1.0, window=10,
                                                 people=apart)] == [3, 2, 1]  # fmt: skip


def test_the_band_holds_what_the_vectors_call_the_same_thing() -> None:
    # 3, the latest, matched a word every turn holds: close by score, far by meaning
    ranked = [Scored(1, 1.0, 1.0, 0.6), Scored(2, 0.5, 0.2, 0.4), Scored(3, 0.4, 1.0, 0.1)]
    order = with_time_band(ranked, times(0, 5, 9), band=0.7, lean=1.0, window=10)
    assert [s.message_id for s in order] == [2, 1, 3]


def test_the_band_never_reaches_past_its_window() -> None:
    ranked = scored(1.0, 0.9, 0.95)  # 3 is the latest and close, but outside a window of 2
    order = with_time_band(ranked, times(0, 5, 9), band=0.7, lean=1.0, window=2)
    assert [s.message_id for s in order] == [2, 1, 3]


def test_without_band_or_lean_the_order_stands() -> None:
    ranked = scored(1.0, 0.9)
    assert with_time_band(ranked, times(0, 5), band=0.0, lean=1.0, window=10) == ranked
    assert with_time_band(ranked, times(0, 5), band=0.7, lean=0.0, window=10) == ranked


# --- context that adapts (pure) ---------------------------------------------------------------


def test_a_long_turn_takes_less_of_its_context_the_longer_it_is() -> None:
    assert context_shares({1: 100, 2: 200, 3: 400, 4: 800}, 200) == {
        1: 1.0,
        2: 1.0,
        3: 0.25,
        4: 0.0625,
    }
    assert context_shares({1: 100, 2: 400}, 0) == {}


def test_a_long_neighbour_does_not_outrank_the_turn_it_borrows_from() -> None:
    # 1 holds the fact; 2, its long neighbour, matches a little itself.
    fused = score([(1, 1.0), (2, 0.5)], {1: 0.5, 2: 0.5}, keyword_weight=0.5)
    rings = {1: ((2,),), 2: ((1,),)}
    plain = rank(fused, neighbours=rings, neighbour_weight=1.0)
    assert [s.message_id for s in plain] == [2, 1]  # 2 borrows all of 1's score
    shares = context_shares({1: 100, 2: 1000}, 200)
    adapted = rank(fused, neighbours=rings, neighbour_weight=1.0, shares=shares)
    assert [s.message_id for s in adapted] == [1, 2]


def test_a_window_lends_a_long_turn_its_share_only() -> None:
    keyword = [(1, 2.0)]
    windows = [(2, 2.0)]
    full = score(keyword, {}, keyword_weight=1.0, windows=windows, window_weight=1.0)
    part = score(
        keyword, {}, keyword_weight=1.0, windows=windows, window_weight=1.0, shares={2: 0.25}
    )
    assert full.own[2] == full.own[1]
    assert part.own[2] == pytest.approx(0.25 * part.own[1])


# --- the context block marks staleness (pure) -------------------------------------------------


def entry(i: int, content: str, day: int, memory: str = "m" * 32, **kw: object) -> Hit:
    e = Entry(
        message_id=i,
        memory_id=memory,
        tenant_id="t",
        content=f"User Input: {content}\nAgent Response: noted",
        message_type=EntryType.RAW,
        valid_at=T0 + timedelta(days=day),
        recorded_at=T0,
        **kw,  # type: ignore[arg-type]
    )
    return Hit(e, 1.0, 1.0, 1.0)


def test_the_block_says_which_of_two_statements_on_one_slot_is_newer() -> None:
    old = entry(1, "My favourite colour is red.", 0)
    new = entry(2, "Actually my favourite colour is teal.", 5)
    other = entry(3, "I bake bread every weekend.", 9)
    assert staleness([old, new, other]) == {1: 2}
    block = assemble([old, new, other], 2000, fence="f").text
    assert "id:1 type:raw valid:2025-01-01 00:00:00 source:conversation older-than:id:2]" in block
    assert "older-than:id:1" not in block and "older-than:id:3" not in block


def test_staleness_follows_valid_time_and_version_chains() -> None:
    backdated = entry(2, "My favourite colour is teal.", -5)
    assert staleness([entry(1, "My favourite colour is red.", 0), backdated]) == {2: 1}
    chain = [entry(1, "one", 0, superseded_by=2), entry(2, "two", 1, supersedes=1)]
    assert staleness(chain) == {1: 2}


def test_staleness_never_crosses_memories() -> None:
    mine = entry(1, "My favourite colour is red.", 0, memory="a" * 32)
    theirs = entry(2, "My favourite colour is teal.", 5, memory="b" * 32)
    assert staleness([mine, theirs]) == {}


def test_staleness_never_crosses_people_in_one_memory() -> None:
    """Two customers of one support memory each say where they live: neither is stale."""
    maria = entry(1, "I live in Lisbon.", 0, user_id="maria")
    tom = entry(2, "I live in Manchester.", 5, user_id="tom")
    ana = entry(3, "我住在巴伦西亚。I live in Valencia.", 9, user_id="ana")
    moved = entry(4, "I live in Porto now.", 12, user_id="maria")
    assert staleness([maria, tom, ana]) == {}
    assert staleness([maria, tom, ana, moved]) == {1: 4}


# --- the engine with the mechanisms on --------------------------------------------------------


def said(engine: Engine, actor: Principal, memory: Memory, text: str, *, user: str = "u1") -> int:
    (e,) = engine.add_messages(actor, [memory.id], [TurnInput(text, user_id=user)])
    return int(e.message_id)


def found(engine: Engine, actor: Principal, memory: Memory, query: str, **kw: object) -> list[int]:
    fields: dict[str, object] = {"top_n": 10, "similarity_threshold": 0.0} | ON | kw
    request = SearchRequest(query, (memory.id,), **fields)  # type: ignore[arg-type]
    return [h.entry.message_id for h in engine.search(actor, request)]


def test_the_later_statement_comes_first(
    engine: Engine, alice: Principal, memory: Memory, clock: FrozenClock
) -> None:
    old = said(engine, alice, memory, "my favourite colour is red")
    clock.advance(days=3)
    new = said(engine, alice, memory, "my favourite colour is teal")
    query = "what is my favourite colour now"
    assert found(engine, alice, memory, query)[:2] == [new, old]
    assert found(engine, alice, memory, "what was my favourite colour first")[:2] == [old, new]


def test_a_filter_still_excludes_a_newer_turn(
    engine: Engine, alice: Principal, memory: Memory, clock: FrozenClock
) -> None:
    mine = said(engine, alice, memory, "my favourite colour is red", user="u1")
    clock.advance(days=3)
    theirs = said(engine, alice, memory, "my favourite colour is teal", user="u2")
    got = found(engine, alice, memory, "favourite colour now", user_id="u1")
    assert mine in got and theirs not in got


def test_an_erased_turn_leaves_no_trace(
    engine: Engine, alice: Principal, memory: Memory, clock: FrozenClock
) -> None:
    old = said(engine, alice, memory, "my favourite colour is red")
    clock.advance(days=3)
    new = said(engine, alice, memory, "my favourite colour is teal")
    engine.erase(alice, memory.id, new)
    assert found(engine, alice, memory, "favourite colour now") == [old]
    request = SearchRequest("favourite colour", (memory.id,), **ON)  # type: ignore[arg-type]
    assert "teal" not in engine.context(alice, request).text
    assert "older-than" not in engine.context(alice, request).text


def test_nothing_crosses_memories_or_users(
    engine: Engine, alice: Principal, bob: Principal, memory: Memory, clock: FrozenClock
) -> None:
    theirs = engine.create_memory(
        bob, name="bob's", memory_type=["raw"], embd_id=memory.embd_id, llm_id=memory.llm_id
    )
    said(engine, alice, memory, "my favourite colour is red")
    clock.advance(days=3)
    newer = said(engine, bob, theirs, "my favourite colour is teal")
    assert newer not in found(engine, alice, memory, "favourite colour now")
    request = SearchRequest("favourite colour", (memory.id,), **ON)  # type: ignore[arg-type]
    block = engine.context(alice, request).text
    assert "teal" not in block and "older-than" not in block
    assert found(engine, bob, memory, "favourite colour now") == []


@pytest.mark.parametrize("bad", [-1, 1.5, True, "200"])
def test_context_length_must_be_a_whole_number(
    engine: Engine, alice: Principal, memory: Memory, bad: object
) -> None:
    from recallery.errors import InvalidInput

    with pytest.raises(InvalidInput):
        found(engine, alice, memory, "colour", context_length=bad)


def test_a_question_about_the_present_gets_the_later_change_first(
    engine: Engine, alice: Principal, memory: Memory, clock: FrozenClock
) -> None:
    """No slot pattern ties these two turns: only the band puts the change first."""
    said(engine, alice, memory, "Can you suggest something easy to cook tonight?")
    clock.advance(days=1)
    old = said(engine, alice, memory, "I have a Ford Fiesta, a reliable little car.")
    clock.advance(days=30)
    new = said(
        engine, alice, memory, "Sold the Ford Fiesta: I have a new little car, a Honda Civic."
    )

    def first_two(query: str, **kw: object) -> list[int]:
        return found(engine, alice, memory, query, **{"recency_weight": 0.0} | kw)[:2]

    assert first_two("what car do I have?", recency_band=0.0) == [old, new]
    assert first_two("what car do I have?") == [new, old]
    for other in ("what car does Sam have?", "what car did I have?"):  # someone else; the past
        assert first_two(other) == first_two(other, recency_band=0.0)  # as ranked
    beginning = found(engine, alice, memory, "what was my first car?", recency_weight=0.0)
    assert beginning.index(old) < beginning.index(new)  # the earliest first


def test_the_band_reorders_only_what_the_filter_let_through(
    engine: Engine, alice: Principal, memory: Memory, clock: FrozenClock
) -> None:
    mine = said(engine, alice, memory, "I have a Ford Fiesta, a reliable little car.", user="u1")
    clock.advance(days=30)
    theirs = said(engine, alice, memory, "Sold it and picked up my new car today.", user="u2")
    got = found(engine, alice, memory, "what car do I have?", user_id="u1", top_n=1)
    assert got == [mine] and theirs not in got

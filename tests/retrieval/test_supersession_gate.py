"""Supersession lifts a newer turn only for a question about the slot that changed (issue 53
item 2, a defect the support-memory benchmark found): after "I live in Graz and I work as an
accountant", then "We've just moved to Gdansk", the question "What does the customer do for a
living?" shares the stem "live" with the home statement, yet it asks about the job, which did
not change; the move has no relevance of its own to it and must not come first. A question
about where the customer lives still puts the move first. Pure stages first, then the engine
with three customers in one memory, one of them writing in Russian."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from recallery import Engine, SearchRequest
from recallery.models import Entry, EntryType, Memory, Principal
from recallery.requests import TurnInput
from recallery.requests.gathered import Gathered, Pools
from recallery.retrieval.stages import Ranked, Ranking
from recallery.services.search import checked, knobs
from recallery.settings import Settings
from recallery.testing import FrozenClock

T0 = datetime(2025, 1, 1, tzinfo=UTC)
GRAZ = "I live in Graz and I work as an accountant"
GDANSK = "We've just moved to Gdansk"
JOB_QUESTION = "What does the customer do for a living?"
HOME_QUESTION = "Where does the customer live?"


def turn(i: int, text: str, day: int, user: str = "c1") -> Entry:
    return Entry(
        message_id=i,
        memory_id="m" * 32,
        tenant_id="t",
        content=f"User Input: {text}\nAgent Response: Noted, thanks.",
        message_type=EntryType.RAW,
        valid_at=T0 + timedelta(days=day),
        recorded_at=T0,
        user_id=user,
    )


def ranked(query: str, cosines: dict[int, float], newer_cosine: float) -> list[Ranked]:
    """The defaults' ranking of the vector leg's candidates (1: the Graz turn), where turn 2
    (the move, ``newer_cosine`` to the query, not a candidate) supersedes turn 1."""
    req = checked(SearchRequest(query, ("0" * 32,)), Settings())
    vector = sorted(cosines.items(), key=lambda kv: -kv[1])
    pools = Pools(keyword=[], cosine=dict(cosines), vector=vector, windows=[])
    linked = {1: turn(1, GRAZ, 0), 2: turn(2, GDANSK, 30)}
    g = Gathered(
        pools, dict(cosines), superseding={1: 2}, linked=linked, linked_cosine={2: newer_cosine}
    )
    return Ranking(knobs(req, 0.5)).rank(g, explain=True)


#: MiniLM's cosines of the customer's other turns to the questions (a complaint, a payment
#: method, an allergy, ...): what the embedder gives a text about anything.
OTHERS = {3: 0.29, 4: 0.19, 5: 0.09, 6: 0.06, 7: 0.03}


def test_a_question_about_the_slot_kept_does_not_lift_the_move() -> None:
    """MiniLM: the job question is 0.43 from the Graz turn and 0.055 from the move. The old
    gate compared stems ("living" is "live") and put the move first with keyword 0, vector 0."""
    hits = ranked(JOB_QUESTION, {1: 0.43, **OTHERS}, newer_cosine=0.055)
    assert hits[0].message_id == 1
    assert all(dict(h.why).get("supersession", 0.0) == 0.0 for h in hits)
    assert 2 not in [h.message_id for h in hits]


def test_a_question_about_the_slot_that_changed_still_lifts_the_move() -> None:
    """MiniLM: "Where does the customer live?" is 0.38 from the Graz turn, 0.22 from the move."""
    hits = ranked(HOME_QUESTION, {1: 0.38, **OTHERS}, newer_cosine=0.22)
    assert [h.message_id for h in hits[:2]] == [2, 1]
    assert dict(hits[0].why).get("supersession", 0.0) > 0


def test_a_question_sharing_only_the_kept_statement_s_words_does_not_lift() -> None:
    """ "work" and "accountant" belong to the job statement, which the move keeps, even where the
    home statement's value runs on over them."""
    hits = ranked("Does the customer still work as an accountant?", {1: 0.5, **OTHERS}, 0.3)
    assert hits[0].message_id == 1


# --- the engine -------------------------------------------------------------------------------


def said(engine: Engine, actor: Principal, memory: Memory, text: str, user: str) -> int:
    turn = TurnInput(f"User Input: {text}\nAgent Response: Noted, thanks.", user_id=user)
    (e,) = engine.add_messages(actor, [memory.id], [turn])
    return int(e.message_id)


def test_three_customers_the_job_question_keeps_the_job_turn_first(
    engine: Engine, alice: Principal, memory: Memory, clock: FrozenClock
) -> None:
    graz = said(engine, alice, memory, GRAZ, "c1")
    said(engine, alice, memory, "I live in Vienna and I work as a nurse", "c2")
    said(engine, alice, memory, "Я живу в Москве и работаю врачом", "c3")
    box = said(engine, alice, memory, "My box arrived late again and the salad was wilted", "c1")
    paid = said(engine, alice, memory, "PayPal works best for me", "c1")
    clock.advance(days=30)
    moved = said(engine, alice, memory, GDANSK, "c1")
    said(engine, alice, memory, "We've just moved to Salzburg", "c2")
    said(engine, alice, memory, "Мы переехали в Казань", "c3")

    def first(query: str, user: str) -> list[int]:
        request = SearchRequest(query, (memory.id,), user_id=user, similarity_threshold=0.0)
        return [h.entry.message_id for h in engine.search(alice, request)]

    job = first(JOB_QUESTION, "c1")
    assert job[0] == graz
    assert moved not in job[:1]
    # another customer's turns never come back for c1's question
    assert set(job) <= {graz, box, paid, moved}

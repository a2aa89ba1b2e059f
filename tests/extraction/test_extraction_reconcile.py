"""Consolidation decisions are pure: plain data in, a decision out."""

from __future__ import annotations

from datetime import UTC, datetime

from recallery.extraction.extractor import Candidate
from recallery.extraction.reconcile import (
    Action,
    Neighbour,
    Thresholds,
    closing_time,
    plan,
    resolve,
    same_statement,
)
from recallery.models import EntryType

T0 = datetime(2026, 1, 1, tzinfo=UTC)
T1 = datetime(2026, 6, 1, tzinfo=UTC)
BERLIN = Candidate(EntryType.SEMANTIC, "The user lives in Berlin", T1)


def n(message_id: int, content: str, similarity: float) -> Neighbour:
    return Neighbour(message_id, content, similarity, T0)


def test_nothing_near_is_added() -> None:
    assert plan(BERLIN, [], []).action is Action.ADD
    assert plan(BERLIN, [n(1, "The user owns a cat", 0.1)], []).action is Action.ADD


def test_the_same_text_is_a_duplicate_whatever_the_vector_says() -> None:
    d = plan(BERLIN, [n(7, "the user lives in Berlin.", 0.4)], [])
    assert (d.action, d.target) == (Action.DUPLICATE, 7)


def test_a_very_similar_entry_with_other_words_needs_judgement() -> None:
    # invariant 8: "now" is a time, and closeness alone never makes a repeat
    d = plan(BERLIN, [n(3, "User lives in Berlin now", 0.95), n(4, "x", 0.93)], [])
    assert (d.action, [o.message_id for o in d.options]) == (Action.JUDGE, [3, 4])
    assert "entry 3 (cosine 0.950) has other words" in d.reason


def test_very_similar_statements_with_other_numbers_or_names_need_judgement() -> None:
    age = Candidate(EntryType.SEMANTIC, "The user is 39 years old", T1)
    d = plan(age, [n(5, "The user is 29 years old", 0.94)], [])
    assert (d.action, [o.message_id for o in d.options]) == (Action.JUDGE, [5])
    assert "other numbers" in d.reason
    porto = plan(BERLIN, [n(6, "The user lives in Porto", 0.95)], [])
    assert porto.action is Action.JUDGE
    assert plan(age, [], [n(9, "The user is 29 years old", 0.94)]).action is Action.ADD


def test_same_statement() -> None:
    assert same_statement("The user lives in Berlin.", "the user lives in berlin")
    assert not same_statement("User lives in Berlin now", "The user lives in Berlin")
    assert not same_statement("The user is 29 years old", "The user is 39 years old")


def test_a_match_with_a_rejected_entry_suppresses_before_anything_else() -> None:
    d = plan(
        BERLIN, [n(2, "The user lives in Berlin", 1.0)], [n(9, "The user lives in Berlin", 1.0)]
    )
    assert (d.action, d.target) == (Action.SUPPRESS, 9)
    # a look-alike is not the rejected statement: "no longer lives in Berlin" would be dropped
    assert plan(BERLIN, [], [n(9, "User resides in Berlin", 0.97)]).action is Action.ADD
    retraction = Candidate(EntryType.SEMANTIC, "The user no longer lives in Berlin", T1)
    assert plan(retraction, [], [n(9, "The user lives in Berlin", 0.96)]).action is Action.ADD


def test_a_loosely_related_rejected_entry_does_not_suppress() -> None:
    assert plan(BERLIN, [], [n(9, "The user lives in Lisbon", 0.8)]).action is Action.ADD


def test_close_but_different_entries_need_judgement() -> None:
    neighbours = [n(1, "The user lives in Lisbon", 0.8), n(2, "The user likes jazz", 0.2)]
    d = plan(BERLIN, neighbours, [], Thresholds(related=0.5))
    assert d.action is Action.JUDGE
    assert [o.message_id for o in d.options] == [1]
    assert "content" not in d.reason and "Lisbon" not in d.reason  # ids only in logs


def test_judgement_options_are_capped_and_ordered() -> None:
    neighbours = [n(i, f"fact {i}", 0.5 + i / 100) for i in range(1, 9)]
    d = plan(BERLIN, neighbours, [], Thresholds(max_options=3))
    assert [o.message_id for o in d.options] == [8, 7, 6]


def test_resolve_maps_numbers_to_the_entries_shown() -> None:
    options = [n(11, "a", 0.7), n(12, "b", 0.6)]
    assert resolve('{"action": "supersedes", "entry": 2}', options).target == 12
    d = resolve('{"action": "duplicate_of", "entry": 1}', options)
    assert (d.action, d.target) == (Action.DUPLICATE, 11)
    assert resolve('{"action": "add", "entry": null}', options).action is Action.ADD


def test_resolve_turns_anything_doubtful_into_add() -> None:
    options = [n(11, "a", 0.7)]
    for answer in (
        "supersedes 1",
        "[]",
        '{"action": "delete", "entry": 1}',
        '{"action": "supersedes", "entry": 11}',  # an id, not a number it was shown
        '{"action": "supersedes", "entry": 0}',
        '{"action": "supersedes", "entry": true}',
        '{"action": "duplicate_of"}',
    ):
        d = resolve(answer, options)
        assert (d.action, d.target) == (Action.ADD, None), answer
        assert d.reason.endswith("added")


def test_closing_time() -> None:
    assert closing_time(T0, None, T1) == T1
    assert closing_time(T1, None, T0) == T1  # never before the old fact began
    early_end = datetime(2026, 3, 1, tzinfo=UTC)
    assert closing_time(T0, early_end, T1) == early_end  # an earlier end is kept

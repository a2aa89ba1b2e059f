"""The top-k BM25 planner (pure): its clauses hold every document that could reach the
threshold, and its floor bounds every document they leave out."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from memstrata.store.postgres import topk
from memstrata.store.postgres.topk import Planner, Round, Term


def terms(seed: int, n: int) -> list[Term]:
    rng = np.random.default_rng(seed)
    return [
        Term(f"t{i}", float(rng.uniform(0.1, 8)), int(rng.integers(1, 50_000)),
             int(rng.integers(1, 4)), int(rng.integers(1, 30)))
        for i in range(n)
    ]  # fmt: skip


def brute_bound(ts: list[Term], chosen: tuple[int, ...], avgdl: float) -> float:
    """B(S): each term at its largest tf, at the longest of the chosen terms' shortest |D|."""
    length = max(ts[i].min_len for i in chosen)
    return sum(float(ts[i].weight * topk.gain(ts[i].max_tf, length, avgdl)) for i in chosen)


@pytest.mark.parametrize("seed", range(12))
def test_clauses_hold_every_set_that_reaches_the_threshold_and_the_floor_bounds_the_rest(
    seed: int,
) -> None:
    ts, avgdl = terms(seed, 2 + seed % 7), 20.0
    planner = Planner(ts, avgdl)
    sets = [c for r in range(1, len(ts) + 1) for c in itertools.combinations(range(len(ts)), r)]
    bounds = {s: brute_bound(ts, s, avgdl) for s in sets}
    for threshold in sorted(bounds.values())[:: max(1, len(sets) // 9)]:
        plan = planner.plan(threshold)
        assert len(plan.clauses) <= topk.MAX_CLAUSES

        def covered(s: tuple[int, ...], plan: Round = plan) -> bool:
            return any(set(c) <= set(s) for c in plan.clauses)

        for s, b in bounds.items():
            if b >= threshold:
                assert covered(s), (threshold, s)
            else:
                assert covered(s) or b <= plan.floor * (1 + 1e-12), (threshold, s)
        assert plan.floor < threshold
        assert plan.floor == pytest.approx(
            max((b for s, b in bounds.items() if not covered(s)), default=0.0), rel=1e-12
        )


def test_many_clauses_are_shortened_to_their_rarest_terms() -> None:
    ts = [Term(f"t{i}", 1.0, 100 * (i + 1), 1, 10) for i in range(12)]
    planner = Planner(ts, 10.0)
    plan = planner.plan(float(planner.bounds[(1 << 6) - 1]))  # any six terms reach it
    assert 0 < len(plan.clauses) <= topk.MAX_CLAUSES
    assert all(len(c) <= 3 for c in plan.clauses)
    assert plan.floor < plan.threshold


def test_the_first_threshold_expects_a_few_documents_per_result() -> None:
    ts = [
        Term("rare", 6.0, 100, 1, 5),
        Term("mid", 3.0, 10_000, 1, 5),
        Term("common", 1.0, 300_000, 1, 5),
    ]
    planner = Planner(ts, 20.0)
    first = planner.first_threshold(1_000_000, 50)
    assert first in planner.bounds[1:]
    assert planner.bounds[0b011] >= first  # the rare and mid term together reach it...
    assert planner.bounds[0b100] < first  # ...the common one alone does not


def test_a_round_is_exact_once_the_kth_score_beats_its_floor() -> None:
    done = Round(threshold=10.0, clauses=((0,),), floor=8.0)
    assert topk.next_threshold(done, 8.5, None, 1.0) is None
    assert topk.next_threshold(done, 7.0, None, 1.0) == 7.0  # a lower bound: prove it next
    assert topk.next_threshold(done, None, 6.0, 1.0) == 6.0  # too few scored: reach further
    assert topk.next_threshold(done, None, None, 1.0) == pytest.approx(8.0 * topk.LOWER)
    assert topk.next_threshold(done, None, None, 6.0) == 0.0  # below every term: all matches
    assert topk.next_threshold(Round(0.0, ((0,),), 0.0), None, None, 1.0) is None


def test_tsquery_quotes_lexemes() -> None:
    ts = [Term("it's", 1, 1, 1, 1), Term("a\\b", 1, 1, 1, 1)]
    assert topk.tsquery(ts, [[0, 1], [1]]) == "('it\\'s' & 'a\\\\b') | ('a\\\\b')"

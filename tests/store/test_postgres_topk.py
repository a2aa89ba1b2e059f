"""The top-k BM25 planner (pure): its clauses hold every document that could reach the
threshold, and its floor bounds every document they leave out."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from recallery.store.postgres import topk
from recallery.store.postgres.topk import Planner, Round, Term


def terms(seed: int, n: int) -> list[Term]:
    rng = np.random.default_rng(seed)
    return [
        Term(f"t{i}", float(rng.uniform(0.1, 8)), int(rng.integers(1, 50_000)),
             int(rng.integers(1, 4)), int(low), int(low + rng.integers(0, 90)))
        for i, low in enumerate(rng.integers(1, 30, n))
    ]  # fmt: skip


def brute_bound(ts: list[Term], chosen: tuple[int, ...], avgdl: float, tier: int) -> float:
    """B(S, tier): each term at its largest tf, at the longest of the chosen terms' shortest
    |D| or the tier's shortest length; 0 where the tier can hold no such document."""
    lo = (0, *topk.LENGTH_TIERS)[tier]
    shortest = max(ts[i].min_len for i in chosen)
    longest = min(ts[i].max_len for i in chosen)
    if topk.tier(shortest) > tier or lo > longest:
        return 0.0
    length = max(shortest, lo)
    return sum(float(ts[i].weight * topk.gain(ts[i].max_tf, length, avgdl)) for i in chosen)


@pytest.mark.parametrize("seed", range(12))
def test_clauses_hold_every_set_that_reaches_the_threshold_and_the_floor_bounds_the_rest(
    seed: int,
) -> None:
    ts, avgdl = terms(seed, 2 + seed % 7), 20.0
    planner = Planner(ts, avgdl)
    sets = [c for r in range(1, len(ts) + 1) for c in itertools.combinations(range(len(ts)), r)]
    bounds = {(s, k): brute_bound(ts, s, avgdl, k) for s in sets for k in topk.ALL_TIERS}
    for threshold in sorted(set(bounds.values()) - {0.0})[:: max(1, len(bounds) // 12)]:
        plan = planner.plan(threshold)
        assert len(plan.clauses) <= topk.MAX_CLAUSES

        def covered(cell: tuple[tuple[int, ...], int], plan: Round = plan) -> bool:
            s, k = cell
            return any(set(c) <= set(s) and k in tiers for c, tiers in plan.clauses)

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
    plan = planner.plan(planner.set_bound((1 << 6) - 1))  # any six terms reach it
    assert 0 < len(plan.clauses) <= topk.MAX_CLAUSES
    assert all(len(c) <= 3 for c, _ in plan.clauses)
    assert plan.floor < plan.threshold


def test_the_first_threshold_expects_a_few_documents_per_result() -> None:
    ts = [
        Term("rare", 6.0, 100, 1, 5),
        Term("mid", 3.0, 10_000, 1, 5),
        Term("common", 1.0, 300_000, 1, 5),
    ]
    planner = Planner(ts, 20.0)
    first = planner.first_threshold(1_000_000, 50)
    assert first in planner.bounds.max(axis=1)[1:]
    assert planner.set_bound(0b011) >= first  # the rare and mid term together reach it...
    assert planner.set_bound(0b100) < first  # ...the common one alone does not


def test_a_round_is_exact_once_the_kth_score_beats_its_floor() -> None:
    done = Round(threshold=10.0, clauses=(((0,), (0,)),), floor=8.0)
    assert topk.next_threshold(done, 8.5, None, 1.0) is None
    assert topk.next_threshold(done, 7.0, None, 1.0) == 7.0  # a lower bound: prove it next
    assert topk.next_threshold(done, None, 6.0, 1.0) == 6.0  # too few scored: reach further
    assert topk.next_threshold(done, None, None, 1.0) == pytest.approx(8.0 * topk.LOWER)
    assert topk.next_threshold(done, None, None, 6.0) == 0.0  # below every term: all matches
    assert topk.next_threshold(Round(0.0, (((0,), (0,)),), 0.0), None, None, 1.0) is None


def test_a_clause_asks_for_its_terms_together_in_each_tier_and_memory_quoted() -> None:
    ts = [Term("it's", 1, 1, 1, 1), Term("a\\b", 1, 1, 1, 1)]
    assert topk.tsqueries(ts, ((0, 1), (2,)), ["m1"]) == ["'it\\'s/2/m1' & 'a\\\\b/2/m1'"]
    assert topk.tsqueries(ts, ((0, 1), (0, 3)), ["m1"]) == [
        "('it\\'s/0/m1' & 'a\\\\b/0/m1') | ('it\\'s/3/m1' & 'a\\\\b/3/m1')"
    ]
    assert topk.tsqueries(ts, ((1,), (0, 3)), ["m1", "m2"]) == [
        "'a\\\\b/0/m1' | 'a\\\\b/0/m2' | 'a\\\\b/3/m1' | 'a\\\\b/3/m2'"
    ]


def test_a_clause_of_common_terms_is_a_scan_per_tier_and_memory() -> None:
    """Where GIN would read many postings of the commoner term, each scan requires every
    key, so it reads the rarest one and skips through the rest."""
    many = topk.SPLIT_POSTINGS * 4
    common = [Term("cat", 1, 10, 1, 1), Term("pet", 1, many, 1, 1)]
    assert topk.tsqueries(common, ((0, 1), (0, 3)), ["m1", "m2"]) == [
        "'cat/0/m1' & 'pet/0/m1'",
        "'cat/0/m2' & 'pet/0/m2'",
        "'cat/3/m1' & 'pet/3/m1'",
        "'cat/3/m2' & 'pet/3/m2'",
    ]
    rare = [Term("cat", 1, 10, 1, 1), Term("pet", 1, many - 1, 1, 1)]
    assert len(topk.tsqueries(rare, ((0, 1), (0, 3)), ["m1", "m2"])) == 1
    assert topk.tsqueries(common, ((1,), (0, 3)), ["m1"]) == ["'pet/0/m1' | 'pet/3/m1'"]


def test_length_tiers_start_where_listed_and_a_term_spans_its_documents_tiers() -> None:
    assert [topk.tier(n) for n in (0, 7, 8, 9, 10, 511, 512, 10**6)] == [0, 0, 1, 1, 2, 18, 19, 19]
    assert topk.term_tiers(Term("x", 1.0, 5, 1, min_len=9, max_len=21)) == (1, 2, 3, 4, 5)


def test_tier_shares_come_from_the_length_statistics() -> None:
    shares = topk.tier_shares([9, 30], [0.2, 0.3], [0, 6, 40, 90])
    assert shares.sum() == pytest.approx(1.0)
    assert shares[topk.tier(9)] == pytest.approx(0.2)
    assert shares[topk.tier(3)] == pytest.approx(0.5 / 3)  # the bucket 0-6, at its middle
    assert shares[topk.tier(23)] == pytest.approx(0.5 / 3)
    assert shares[topk.tier(30)] == pytest.approx(0.3)


def test_the_first_threshold_by_tier_expects_long_documents_to_score_less() -> None:
    ts = [Term("rare", 6.0, 100, 1, 5, 200), Term("mid", 3.0, 10_000, 1, 5, 200)]
    planner = Planner(ts, 40.0)
    long_ones = np.zeros(topk.TIERS)
    long_ones[topk.tier(60)] = 1.0  # every document about 60 tokens long
    by_tier = planner.first_threshold(1_000_000, 50, long_ones)
    assert by_tier in planner.bounds[1:, topk.tier(60)]
    assert by_tier < planner.first_threshold(1_000_000, 50)

"""Fusion of keyword and vector candidates into one ranking. Pure functions over plain data."""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from memstrata.models import Fusion

#: Rank constant of reciprocal-rank fusion (Cormack et al. 2009).
RRF_K = 60


@dataclass(frozen=True, slots=True)
class Scored:
    message_id: int
    score: float
    keyword: float
    vector: float


@dataclass(frozen=True)
class Fused:
    """Every candidate's own fused score, before threshold, context and ranking.

    ``admit`` holds the score the threshold compares: the fused score for weighted fusion,
    the better of the two normalised side scores for reciprocal-rank fusion.
    """

    keyword: Sequence[tuple[int, float]]
    vector: Mapping[int, float]
    keyword_weight: float
    method: Fusion
    own: dict[int, float]
    keyword_norm: dict[int, float]
    admit: dict[int, float]

    def joined(self, vector: Mapping[int, float]) -> Fused:
        """The scores once more entries joined the vector pool (conversation neighbours).
        Weighted scores are per entry, so only the newcomers are scored; reciprocal ranks
        depend on the whole pool, so they are ranked again."""
        if self.method is Fusion.RRF:
            return score(
                self.keyword, vector, keyword_weight=self.keyword_weight, method=self.method
            )
        new = {i: c for i, c in vector.items() if i not in self.own}
        own = dict(self.own)
        vw = 1 - self.keyword_weight
        own.update({i: vw * max(c, 0.0) for i, c in new.items()})
        return Fused(
            self.keyword, vector, self.keyword_weight, self.method, own, self.keyword_norm, own
        )

    def leaders(self, limit: int) -> list[int]:
        """Ids of the ``limit`` best candidates by their own score (ties: newer id first)."""
        return [s.message_id for s in rank(self, limit=limit)]


def score(
    keyword: Sequence[tuple[int, float]],
    vector: Mapping[int, float],
    *,
    keyword_weight: float,
    method: Fusion = Fusion.WEIGHTED,
) -> Fused:
    """Own fused scores of every candidate (see :func:`fuse`)."""
    best = max((s for _, s in keyword), default=0.0)
    kw_norm = {i: (s / best if best > 0 else 0.0) for i, s in keyword}
    ids = set(kw_norm) | set(vector)
    if method is Fusion.RRF:
        own = _rrf(keyword, vector, ids, keyword_weight)
        admit = {i: max(kw_norm.get(i, 0.0), vector.get(i, 0.0)) for i in ids}
    else:
        vw = 1 - keyword_weight
        own = {
            i: keyword_weight * kw_norm.get(i, 0.0) + vw * max(vector.get(i, 0.0), 0.0) for i in ids
        }
        admit = own
    return Fused(keyword, vector, keyword_weight, method, own, kw_norm, admit)


def rank(
    fused: Fused,
    *,
    threshold: float = 0.0,
    neighbours: Mapping[int, Sequence[Sequence[int]]] | None = None,
    neighbour_weight: float = 0.0,
    limit: int | None = None,
) -> list[Scored]:
    """The candidates whose own score reaches ``threshold``, with conversation context added,
    best first (ties: newer id first), the best ``limit`` of them when it is given."""
    own = fused.own
    kept = [i for i, s in fused.admit.items() if s >= threshold]
    final = own
    if neighbours and neighbour_weight > 0:
        final = {i: own[i] + neighbour_weight * _context(i, own, neighbours) for i in kept}
    key = lambda i: (-final[i], -i)  # noqa: E731
    order = sorted(kept, key=key) if limit is None else heapq.nsmallest(limit, kept, key=key)
    kw, vec = fused.keyword_norm, fused.vector
    return [Scored(i, final[i], kw.get(i, 0.0), vec.get(i, 0.0)) for i in order]


def fuse(
    keyword: Sequence[tuple[int, float]],
    vector: Mapping[int, float],
    *,
    keyword_weight: float,
    method: Fusion = Fusion.WEIGHTED,
    threshold: float = 0.0,
    neighbours: Mapping[int, Sequence[Sequence[int]]] | None = None,
    neighbour_weight: float = 0.0,
    limit: int | None = None,
) -> list[Scored]:
    """Fuse candidates, drop those under ``threshold``, best first (ties: newer id first),
    the best ``limit`` of them when it is given.

    ``keyword`` holds (id, BM25 score) best first; ``vector`` maps every candidate (from both
    legs) to its cosine similarity. ``keyword_weight`` is the weight of the keyword side, as
    its name says. Weighted fusion scales BM25 by the best keyword score of the pool, so both
    sides lie in [0, 1], and the threshold applies to the fused score; with reciprocal-rank
    fusion the threshold applies to the better of the two normalised side scores.

    ``neighbours`` maps a candidate to its conversation neighbours by distance (1, 2, ...);
    each distance adds ``neighbour_weight`` times the best fused score found there, so a turn
    that answers in context ("yes, last week!") rises with the turn that names the subject.
    Neighbours must be candidates themselves (their own scores are what is borrowed). The
    threshold looks at an entry's own score: context reorders, it never admits an entry.
    """
    fused = score(keyword, vector, keyword_weight=keyword_weight, method=method)
    return rank(
        fused,
        threshold=threshold,
        neighbours=neighbours,
        neighbour_weight=neighbour_weight,
        limit=limit,
    )


def _context(
    i: int, own: Mapping[int, float], neighbours: Mapping[int, Sequence[Sequence[int]]]
) -> float:
    """The best own score at each distance of ``i``'s conversation neighbours, summed."""
    return sum(max((own.get(n, 0.0) for n in ring), default=0.0) for ring in neighbours.get(i, ()))


def _rrf(
    keyword: Sequence[tuple[int, float]],
    vector: Mapping[int, float],
    ids: set[int],
    keyword_weight: float,
) -> dict[int, float]:
    kw_rank = {i: r for r, (i, _) in enumerate(keyword, start=1)}
    vec_order = sorted(vector.items(), key=lambda kv: (-kv[1], -kv[0]))
    vec_rank = {i: r for r, (i, _) in enumerate(vec_order, start=1)}
    out = {}
    for i in ids:
        score = 0.0
        if i in kw_rank:
            score += keyword_weight * (RRF_K + 1) / (RRF_K + kw_rank[i])
        if i in vec_rank:
            score += (1 - keyword_weight) * (RRF_K + 1) / (RRF_K + vec_rank[i])
        out[i] = score
    return out

"""Fusion of keyword and vector candidates into one ranking. Pure functions over plain data."""

from __future__ import annotations

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


def fuse(
    keyword: Sequence[tuple[int, float]],
    vector: Mapping[int, float],
    *,
    keyword_weight: float,
    method: Fusion = Fusion.WEIGHTED,
    threshold: float = 0.0,
    neighbours: Mapping[int, Sequence[Sequence[int]]] | None = None,
    neighbour_weight: float = 0.0,
) -> list[Scored]:
    """Fuse candidates, drop those under ``threshold``, best first (ties: newer id first).

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
    best = max((s for _, s in keyword), default=0.0)
    kw_norm = {i: (s / best if best > 0 else 0.0) for i, s in keyword}
    ids = set(kw_norm) | set(vector)
    if method is Fusion.RRF:
        scored = _rrf(keyword, vector, kw_norm, ids, keyword_weight)
    else:
        scored = [
            Scored(
                i,
                keyword_weight * kw_norm.get(i, 0.0)
                + (1 - keyword_weight) * max(vector.get(i, 0.0), 0.0),
                kw_norm.get(i, 0.0),
                vector.get(i, 0.0),
            )
            for i in ids
        ]
    kept = [s for s in scored if _passes(s, method, threshold)]
    if neighbours and neighbour_weight > 0:
        kept = _with_context(kept, scored, neighbours, neighbour_weight)
    kept.sort(key=lambda s: (-s.score, -s.message_id))
    return kept


def _with_context(
    kept: list[Scored],
    scored: list[Scored],
    neighbours: Mapping[int, Sequence[Sequence[int]]],
    weight: float,
) -> list[Scored]:
    own = {s.message_id: s.score for s in scored}
    out = []
    for s in kept:
        bonus = sum(
            max((own.get(n, 0.0) for n in ring), default=0.0)
            for ring in neighbours.get(s.message_id, ())
        )
        out.append(Scored(s.message_id, s.score + weight * bonus, s.keyword, s.vector))
    return out


def _passes(s: Scored, method: Fusion, threshold: float) -> bool:
    if method is Fusion.RRF:
        return max(s.keyword, s.vector) >= threshold
    return s.score >= threshold


def _rrf(
    keyword: Sequence[tuple[int, float]],
    vector: Mapping[int, float],
    kw_norm: Mapping[int, float],
    ids: set[int],
    keyword_weight: float,
) -> list[Scored]:
    kw_rank = {i: r for r, (i, _) in enumerate(keyword, start=1)}
    vec_order = sorted(vector.items(), key=lambda kv: (-kv[1], -kv[0]))
    vec_rank = {i: r for r, (i, _) in enumerate(vec_order, start=1)}
    out = []
    for i in ids:
        score = 0.0
        if i in kw_rank:
            score += keyword_weight * (RRF_K + 1) / (RRF_K + kw_rank[i])
        if i in vec_rank:
            score += (1 - keyword_weight) * (RRF_K + 1) / (RRF_K + vec_rank[i])
        out.append(Scored(i, score, kw_norm.get(i, 0.0), vector.get(i, 0.0)))
    return out

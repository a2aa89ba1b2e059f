"""Fusion of keyword and vector candidates into one ranking. Pure functions over plain data."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from recallery.models import Fusion

#: Rank constant of reciprocal-rank fusion (Cormack et al. 2009).
RRF_K = 60
#: Balanced fusion: how far the caller's keyword weight moves the balance from the model's
#: (a weight of 0.5 gives the model's balance; RAGFlow's default 0.7 gives it + 0.05). Half
#: of this moved LoCoMo R@10 by 11 points between weights 0.1 and 0.7; a quarter, by 2, and
#: gave the same or better recall at every weight on the tuning conversations.
HINT_SPAN = 0.25


@dataclass(frozen=True, slots=True)
class Scored:
    message_id: int
    score: float
    keyword: float
    vector: float


@dataclass(frozen=True)
class Fused:
    """Every candidate's own fused score, before threshold, context and ranking.

    ``admit`` holds the score the threshold compares, the same for every method
    (:func:`admission`): the better of the keyword score over the best one and the raw cosine.
    """

    keyword: Sequence[tuple[int, float]]
    vector: Mapping[int, float]
    keyword_weight: float
    method: Fusion
    own: dict[int, float]
    keyword_norm: dict[int, float]
    admit: dict[int, float]
    admit_weight: float
    """The caller's keyword weight (balanced fusion ranks by a hint around it): a side it
    gives no weight admits nothing."""
    vector_scale: tuple[float, float] = (0.0, 1.0)
    """Balanced fusion: the cosine that counts 0 and the one that counts 1."""

    def joined(self, vector: Mapping[int, float]) -> Fused:
        """The scores once more entries joined the vector pool (conversation neighbours).
        Weighted scores are per entry, so only the newcomers are scored; reciprocal ranks
        depend on the whole pool, so they are ranked again."""
        if self.method is Fusion.RRF:
            return score(
                self.keyword,
                vector,
                keyword_weight=self.keyword_weight,
                method=self.method,
                threshold_weight=self.admit_weight,
            )
        new = {i: c for i, c in vector.items() if i not in self.own}
        vw = 1 - self.keyword_weight
        own, admit = dict(self.own), dict(self.admit)
        admit.update({i: admission(0.0, c, self.admit_weight) for i, c in new.items()})
        if self.method is Fusion.BALANCED:
            own.update({i: vw * _spread(c, self.vector_scale) for i, c in new.items()})
        else:
            own.update({i: vw * max(c, 0.0) for i, c in new.items()})
        return Fused(
            self.keyword,
            vector,
            self.keyword_weight,
            self.method,
            own,
            self.keyword_norm,
            admit,
            self.admit_weight,
            self.vector_scale,
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
    vector_pool: Sequence[float] | None = None,
    threshold_weight: float | None = None,
    windows: Sequence[tuple[int, float]] = (),
    window_weight: float = 0.0,
    shares: Mapping[int, float] | None = None,
) -> Fused:
    """Own fused scores of every candidate (see :func:`fuse`).

    ``windows`` holds (id, BM25 score) of conversation windows (a raw turn with the turns it
    answers): for ranking, an entry's keyword side is its own BM25 plus ``window_weight``
    times its window's, over the best such sum; the threshold looks at its own BM25 only
    (context reorders, it never admits). Not for reciprocal-rank fusion.

    Balanced fusion only: ``vector_pool``, the cosine similarities of the vector leg's own
    candidates, whose spread it scales by (default: every value of ``vector``).
    ``threshold_weight`` is the caller's keyword weight, of which the threshold asks only
    whether it gives a side any weight (default: ``keyword_weight``). ``shares``: the part of
    its window an entry takes (:func:`~recallery.retrieval.adaptive.context_shares`; default 1)."""
    best = max((s for _, s in keyword), default=0.0)
    kw_norm = {i: (s / best if best > 0 else 0.0) for i, s in keyword}
    kw_rank = _with_windows(keyword, windows, window_weight, shares) if windows else kw_norm
    ids = set(kw_rank) | set(vector)
    vw = 1 - keyword_weight
    aw = keyword_weight if threshold_weight is None else threshold_weight
    admit = {i: admission(kw_norm.get(i, 0.0), vector.get(i, 0.0), aw) for i in ids}
    if method is Fusion.RRF:
        own = _rrf(keyword, vector, ids, keyword_weight)
        return Fused(keyword, vector, keyword_weight, method, own, kw_norm, admit, aw)
    if method is Fusion.BALANCED:
        scale = vector_scale(list(vector.values()) if vector_pool is None else vector_pool)
        own = {
            i: keyword_weight * kw_rank.get(i, 0.0) + vw * _spread(vector.get(i, 0.0), scale)
            for i in ids
        }
        return Fused(keyword, vector, keyword_weight, method, own, kw_norm, admit, aw, scale)
    own = {i: keyword_weight * kw_rank.get(i, 0.0) + vw * max(vector.get(i, 0.0), 0.0) for i in ids}
    return Fused(keyword, vector, keyword_weight, method, own, kw_norm, admit, aw)


def admission(keyword: float, cosine: float, weight: float) -> float:
    """The score ``similarity_threshold`` compares: the better of an entry's two sides, its
    BM25 over the best of the pool and its cosine, leaving out a side the caller's keyword
    ``weight`` gives nothing (1: keywords only, 0: vectors only).

    So an entry passes when either side finds it similar enough. Its cosine is cut where
    RAGFlow's vector leg cuts; RAGFlow keeps every keyword match (of an English query), here a
    match must reach the threshold against the pool's best. A weighted sum, as this was, cut
    most of what one side alone finds: at the SDK's defaults (weight 0.7, threshold 0.2) an
    entry the keywords missed needed a cosine of 0.67, and LoCoMo R@10 fell from 78.7 to 71.7
    against no threshold (benchmarks/README.md)."""
    if weight >= 1.0:
        return keyword
    if weight <= 0.0:
        return max(cosine, 0.0)
    return max(keyword, cosine, 0.0)


def _with_windows(
    keyword: Sequence[tuple[int, float]],
    windows: Sequence[tuple[int, float]],
    weight: float,
    shares: Mapping[int, float] | None = None,
) -> dict[int, float]:
    """Own BM25 plus ``weight`` times the window's (times the entry's share), over the best
    such sum."""
    total = dict(keyword)
    for i, s in windows:
        share = 1.0 if shares is None else shares.get(i, 1.0)
        total[i] = total.get(i, 0.0) + weight * share * s
    best = max(total.values(), default=0.0)
    return {i: (s / best if best > 0 else 0.0) for i, s in total.items()}


def vector_scale(cosines: Sequence[float]) -> tuple[float, float]:
    """The cosine that counts 0 (the candidates' mean) and the one that counts 1 (the best):
    a model whose similarities all lie close together is spread out as much as one whose
    similarities range widely, so the keyword weight means the same for both."""
    if not cosines:
        return (0.0, 1.0)
    return (sum(cosines) / len(cosines), max(cosines))


def _spread(cosine: float, scale: tuple[float, float]) -> float:
    floor, top = scale
    if top <= floor:
        return 0.0
    return min(max((cosine - floor) / (top - floor), 0.0), 1.0)


def hinted_weight(weight: float, balance: float) -> float:
    """The keyword weight balanced fusion uses: the model's ``balance`` moved by
    :data:`HINT_SPAN` times how far the caller's ``weight`` lies from 0.5, within [0, 1].
    0 and 1 keep their meaning: one side only."""
    if weight <= 0.0 or weight >= 1.0:
        return weight
    return min(max(balance + HINT_SPAN * (weight - 0.5), 0.0), 1.0)


def rank(
    fused: Fused,
    *,
    threshold: float = 0.0,
    neighbours: Mapping[int, Sequence[Sequence[int]]] | None = None,
    neighbour_weight: float = 0.0,
    limit: int | None = None,
    shares: Mapping[int, float] | None = None,
    eligible: Callable[[int], bool] | None = None,
) -> list[Scored]:
    """The candidates whose own score reaches ``threshold``, with conversation context added
    (times each one's share of it, default 1) to those ``eligible`` says (default: all),
    best first (ties: newer id first), the best ``limit`` of them when it is given."""
    own = fused.own
    kept = [i for i, s in fused.admit.items() if s >= threshold]
    final = own
    if neighbours and neighbour_weight > 0:
        final = _with_context(
            kept, own, neighbours, neighbour_weight, limit, shares or {}, eligible
        )
        kept = list(final)
    key = lambda i: (-final[i], -i)  # noqa: E731
    order = sorted(kept, key=key) if limit is None else heapq.nsmallest(limit, kept, key=key)
    kw, vec = fused.keyword_norm, fused.vector
    return [Scored(i, final[i], kw.get(i, 0.0), vec.get(i, 0.0)) for i in order]


def _with_context(
    kept: Sequence[int],
    own: Mapping[int, float],
    neighbours: Mapping[int, Sequence[Sequence[int]]],
    weight: float,
    limit: int | None,
    shares: Mapping[int, float],
    eligible: Callable[[int], bool] | None = None,
) -> dict[int, float]:
    """Own score plus context for the candidates that can reach the best ``limit``: taken
    best own score first, they stop once even the most context any of them could get (every
    ring's best at the pool's best own score) no longer lifts one to the ``limit``-th final
    score (an equal one could still win its tie, so it is taken)."""
    by_own = sorted(kept, key=lambda i: (-own[i], -i))
    rings = max((len(r) for r in neighbours.values()), default=0)
    most = weight * rings * max(0.0, *own.values())
    final: dict[int, float] = {}
    best: list[float] = []  # the best ``limit`` finals so far, as a min-heap
    for i in by_own:
        if limit is not None and len(best) == limit and own[i] + most < best[0]:
            break
        if eligible is None or eligible(i):
            final[i] = own[i] + weight * shares.get(i, 1.0) * _context(i, own, neighbours)
        else:
            final[i] = own[i]
        if limit is not None:
            (heapq.heappush if len(best) < limit else heapq.heappushpop)(best, final[i])
    return final


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
    sides lie in [0, 1], and ranks by their weighted sum. Balanced fusion ranks by the same sum
    with the cosine spread over the vector candidates (their mean counts 0, the best 1), so
    neither side dominates by its scale alone. Reciprocal-rank fusion ranks by ranks. With
    every method the threshold applies to the better of the two sides (:func:`admission`).

    ``neighbours`` maps a candidate to its conversation neighbours by distance (1, 2, ...);
    each distance adds ``neighbour_weight`` times the best fused score found there, so a turn
    that answers in context ("yes, last week!") rises with the turn that names the subject.
    Neighbours must be candidates themselves (their own scores are what is borrowed). The
    threshold looks at an entry's own sides: context reorders, it never admits an entry.
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
    """The best own score at each distance of ``i``'s conversation neighbours, summed (0 for
    a distance with none). Plain loops: a search asks this of a few hundred candidates, and
    generators inside ``sum`` and ``max`` cost more than the lookups."""
    get = own.get
    total = 0.0
    for ring in neighbours.get(i, ()):
        best = None
        for n in ring:
            score = get(n, 0.0)
            if best is None or score > best:
                best = score
        if best is not None:
            total += best
    return total


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

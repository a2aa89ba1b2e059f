"""Ranking in stages over what a search gathered (:class:`~.candidates.Gathered`), each a pure
step that adds a named contribution to a candidate's score; the score is their sum, and a
search can return each hit's contributions (``explain``), the way Lucene's ``explain`` takes
a score apart. Nothing here reads the store: the store was read once, before.

The stages, in order:

- **relevance** (:func:`~.fusion.score`): ``keyword`` (own BM25), ``window`` (the BM25 of
  the turn's conversation window) and ``vector`` (cosine), fused as the request says;
- **neighbours**: what a raw turn borrows from its conversation neighbours' relevance;
- **recency**: the prior that lifts a later candidate among the best (opt-in);
- **supersession**: a later turn of the same person restating a ranked turn's statement is
  placed just above it, only where the question is about that statement;
- **time_band**: a short question about the present orders its close candidates by time;
  each takes the score of the place it moves to, so scores fall down the list.

A mechanism never lifts a candidate on its own: neighbours, recency and the band move only
candidates with relevance of their own (a keyword match or a cosine above 0), and
supersession only the turn that replaces the statement the question is about.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from recallery.models import Entry, Fusion
from recallery.ownership import same_person
from recallery.requests.gathered import Gathered, Pools, Rings, Wants
from recallery.retrieval import plan
from recallery.retrieval.adaptive import context_shares
from recallery.retrieval.fusion import RRF_K, Fused, Scored, rank, score
from recallery.retrieval.recency import with_recency, with_time_band
from recallery.retrieval.supersede import with_superseding
from recallery.text.analyzer import analyze, query_terms
from recallery.text.slots import slots, statements

Why = tuple[tuple[str, float], ...]
"""A hit's contributions by stage, in stage order (stages that added nothing left out)."""


@dataclass(frozen=True)
class Knobs:
    """One search's ranking, every value checked and resolved (time cues read once)."""

    query: str
    top_n: int
    keyword_weight: float
    threshold_weight: float
    method: Fusion
    threshold: float
    window_weight: float
    span: int
    neighbour_weight: float
    context_length: int
    recency: float
    """The recency prior's weight times the query's time lean (0: off)."""
    band: float
    band_lean: float
    supersession: float
    """0 where off or where the query asks about the past."""


@dataclass(frozen=True, slots=True)
class Ranked:
    """A ranked candidate: its score, its two sides and, when explained, its contributions."""

    message_id: int
    score: float
    keyword: float
    vector: float
    why: Why = ()


class Ranking:
    """The stages of one search over what it gathered; :meth:`wants` says what to gather,
    :meth:`leaders` is asked by the gather which candidates take conversation context."""

    def __init__(self, knobs: Knobs) -> None:
        self.k = knobs
        self._fused: tuple[int, Fused] | None = None
        self._placed: tuple[tuple[int, int, int], Fused, list[Scored]] | None = None

    @property
    def shown(self) -> int:
        """How many the ranking orders: the band reorders the first ten even where fewer
        are asked for."""
        return max(self.k.top_n, plan.BAND_WINDOW) if self.k.band_lean else self.k.top_n

    def wants(self) -> Wants:
        k = self.k
        context = k.span > 0 and k.neighbour_weight > 0
        return Wants(
            pool=max(plan.POOL_FACTOR * k.top_n, plan.MIN_POOL),
            windows=max(k.top_n, plan.MIN_WINDOWS) if k.window_weight > 0 else 0,
            span=k.span if context else 0,
            leaders=self.leaders if context else None,
            placed=self.placed_ids,
            lengths=k.context_length > 0,
            times=bool(k.recency) or bool(k.band_lean and k.band > 0),
            hops=plan.SUPERSESSION_HOPS if k.supersession > 0 else 0,
        )

    def leaders(self, pools: Pools, lengths: Mapping[int, int]) -> list[int]:
        """The candidates that take conversation context: the best ``CONTEXT_FACTOR *
        top_n`` by their own score (at least ``MIN_CONTEXT``); further down, no bonus
        reaches the top."""
        limit = max(plan.CONTEXT_FACTOR * self.k.top_n, plan.MIN_CONTEXT)
        return self._relevance(pools, lengths).leaders(limit)

    def _relevance(self, pools: Pools, lengths: Mapping[int, int]) -> Fused:
        if self._fused is not None and self._fused[0] == id(pools):
            return self._fused[1]
        k = self.k
        fused = score(
            pools.keyword,
            pools.cosine,
            keyword_weight=k.keyword_weight,
            method=k.method,
            vector_pool=[c for _, c in pools.vector],
            threshold_weight=k.threshold_weight,
            windows=pools.windows,
            window_weight=k.window_weight if k.method is not Fusion.RRF else 0.0,
            shares=self._shares(lengths),
        )
        self._fused = (id(pools), fused)
        return fused

    def placed_ids(
        self,
        pools: Pools,
        cosine: Mapping[int, float],
        neighbours: Rings,
        lengths: Mapping[int, int],
    ) -> list[int]:
        """The candidates the stages after relevance and neighbours look at: only these
        can be moved by time or supersession, or shown, so only their times and links are
        gathered."""
        return [
            s.message_id for s in self._placed_by_relevance(pools, cosine, neighbours, lengths)[1]
        ]

    def _placed_by_relevance(
        self,
        pools: Pools,
        cosine: Mapping[int, float],
        neighbours: Rings,
        lengths: Mapping[int, int],
    ) -> tuple[Fused, list[Scored]]:
        """The relevance and neighbours stages: the best candidates on their own scores
        with what their conversations lend them, as many as the later stages look at
        (computed once a search: the gather asks first, :meth:`rank` again)."""
        key = (id(pools), id(cosine), id(neighbours))
        if self._placed is not None and self._placed[0] == key:
            return self._placed[1], self._placed[2]
        k = self.k
        fused = self._relevance(pools, lengths)
        if neighbours:
            fused = fused.joined(cosine)
        kw, vec = fused.keyword_norm, fused.vector
        relevant = lambda i: kw.get(i, 0.0) > 0 or vec.get(i, 0.0) > 0  # noqa: E731
        ranked = rank(
            fused,
            threshold=k.threshold,
            neighbours=neighbours,
            neighbour_weight=k.neighbour_weight,
            limit=max(self.shown, plan.RECENCY_POOL) if k.recency else self.shown,
            shares=self._shares(lengths),
            eligible=relevant,
        )
        self._placed = (key, fused, ranked)
        return fused, ranked

    def _shares(self, lengths: Mapping[int, int]) -> dict[int, float] | None:
        full = self.k.context_length
        return context_shares(lengths, full) if full > 0 else None

    def rank(self, g: Gathered, *, explain: bool = False) -> list[Ranked]:
        """The best ``top_n`` of what was gathered, each stage in turn."""
        k = self.k
        fused, ranked = self._placed_by_relevance(g.pools, g.cosine, g.neighbours, g.lengths)
        shares = self._shares(g.lengths)
        own = fused.own
        shown = self.shown
        added: dict[int, dict[str, float]] = {}
        for s in ranked:
            _add(added, s.message_id, "neighbours", s.score - own.get(s.message_id, 0.0))
        if k.recency:
            times = {i: (t, i) for i, t in g.times.items()}
            moved = with_recency(ranked, times, weight=k.recency, limit=shown)
            ranked = _noted(added, "recency", ranked, moved)
        if k.supersession and g.superseding:
            newer = self._about_the_question(g, {s.message_id for s in ranked})
            # the older turn is kept where fewer than ``shown`` were ranked (never hidden)
            moved = with_superseding(ranked, newer, weight=k.supersession, limit=shown)
            ranked = _noted(added, "supersession", ranked, moved)
        if k.band_lean and k.band > 0:
            times = {i: (t, i) for i, t in g.times.items()}
            moved = with_time_band(
                ranked,
                times,
                band=k.band,
                lean=k.band_lean,
                window=plan.BAND_WINDOW,
                mean=_mean([c for _, c in g.pools.vector]),
                people=g.people,
            )
            placed = [replace(s, score=at.score) for s, at in zip(moved, ranked, strict=True)]
            ranked = _noted(added, "time_band", ranked, placed)
        ranked = ranked[: k.top_n]
        if not explain:
            return [Ranked(s.message_id, s.score, s.keyword, s.vector) for s in ranked]
        parts = _relevance_parts(fused, g.pools, shares, k)
        return [
            Ranked(s.message_id, s.score, s.keyword, s.vector, _why(s, parts, added))
            for s in ranked
        ]

    def _about_the_question(self, g: Gathered, ranked: set[int]) -> dict[int, int]:
        """The links whose newer turn replaces what the question asks of the older one: of
        the same person, and where the older turn states more than the slots the newer one
        restates (a turn of two facts), only when the question is about the slot that
        changed: it shares a term with that slot's own words (the statement replaced less
        the words of the statements kept: "where does the user live?" is not about a new
        job), and the newer turn has relevance of its own, a cosine at least the candidates'
        mean (what the embedder gives a text about anything). A stem is not a meaning:
        "what does the customer do for a living?" shares "live" with "I live in Graz and I
        work as an accountant", but "We've just moved to Gdansk" is no nearer to it than
        any other turn, so the move is not lifted above the job."""
        out: dict[int, int] = {}
        terms: set[str] | None = None
        floor: float | None = None
        for old, new in g.superseding.items():
            before, after = g.linked.get(old), g.linked.get(new)
            if old not in ranked or before is None or after is None:
                continue
            if not same_person(before, after):
                continue
            parts = _replaced(before, after)
            if parts is not None:
                replaced, kept = parts
                if terms is None:
                    terms = set(query_terms(self.k.query))
                    floor = _mean([c for _, c in g.pools.vector])
                own = set(analyze(" ".join(_apart(replaced, kept))).terms)
                own -= set(analyze(" ".join(_apart(kept, replaced))).terms)
                if not terms & own:
                    continue
                if g.linked_cosine.get(new, 0.0) < (floor or 0.0):
                    continue
            out[old] = new
        return out


def _mean(cosines: Sequence[float]) -> float:
    """The mean of the vector leg's cosines: what the embedder gives a text about anything
    (the band's guard is a share of the spread above it)."""
    return sum(cosines) / len(cosines) if cosines else 0.0


def _replaced(before: Entry, after: Entry) -> tuple[list[str], list[str]] | None:
    """The statements of ``before`` that ``after`` restates and those it keeps, where
    ``before`` says more than those restated (None: all it says is replaced)."""
    said = statements(before.content)
    restated = set(said) & set(slots(after.content))
    if not restated or restated == set(said):
        return None
    replaced = [said[slot] for slot in sorted(restated)]
    return replaced, [said[slot] for slot in sorted(set(said) - restated)]


def _apart(these: Sequence[str], others: Sequence[str]) -> list[str]:
    """``these`` statements less any of ``others`` they run on over (a value runs to the end
    of its clause: "I live in Graz and I work as an accountant" holds the job statement)."""
    out = []
    for said in these:
        for other in others:
            if other != said and other in said:
                said = said.replace(other, " ")
        out.append(said)
    return out


def _add(added: dict[int, dict[str, float]], i: int, stage: str, delta: float) -> None:
    if delta:
        found = added.setdefault(i, {})
        found[stage] = found.get(stage, 0.0) + delta


def _noted(
    added: dict[int, dict[str, float]], stage: str, before: Sequence[Scored], after: list[Scored]
) -> list[Scored]:
    """``after``, each score's change from ``before`` noted as ``stage``'s contribution (a
    candidate new to the list: all of its score, and nothing of its own)."""
    was = {s.message_id: s.score for s in before}
    for s in after:
        if s.message_id in was:
            _add(added, s.message_id, stage, s.score - was[s.message_id])
        else:
            added[s.message_id] = {_ONLY: 1.0, stage: s.score}
    return after


def _relevance_parts(
    fused: Fused, pools: Pools, shares: Mapping[int, float] | None, k: Knobs
) -> dict[int, dict[str, float]]:
    """Each candidate's own score split into its keyword, window and vector parts."""
    out: dict[int, dict[str, float]] = {}
    bm25 = dict(pools.keyword)
    if fused.method is Fusion.RRF:
        for i, total in fused.own.items():
            part = _rrf_keyword(pools.keyword, i, fused.keyword_weight)
            out[i] = {"keyword": part, "vector": total - part}
        return out
    windows = {}
    if k.window_weight > 0 and pools.windows:
        windows = {
            i: k.window_weight * (1.0 if shares is None else shares.get(i, 1.0)) * s
            for i, s in pools.windows
        }
    totals = {i: bm25.get(i, 0.0) + windows.get(i, 0.0) for i in {*bm25, *windows}}
    best = max(totals.values(), default=0.0)
    for i, total in fused.own.items():
        keyword = fused.keyword_weight * bm25.get(i, 0.0) / best if best > 0 else 0.0
        window = fused.keyword_weight * windows.get(i, 0.0) / best if best > 0 else 0.0
        out[i] = {"keyword": keyword, "window": window, "vector": total - keyword - window}
    return out


def _rrf_keyword(keyword: Sequence[tuple[int, float]], i: int, weight: float) -> float:
    for r, (j, _) in enumerate(keyword, start=1):
        if j == i:
            return weight * (RRF_K + 1) / (RRF_K + r)
    return 0.0


#: Marks a candidate a mechanism brought into the list: its score is the mechanism's alone.
_ONLY = ""
#: The contributions in stage order.
STAGES = ("keyword", "window", "vector", "neighbours", "recency", "supersession", "time_band")


def _why(
    s: Scored, parts: Mapping[int, dict[str, float]], added: Mapping[int, dict[str, float]]
) -> Why:
    """``s``'s contributions in stage order; they add up to its score."""
    mine = added.get(s.message_id, {})
    found = mine if _ONLY in mine else {**parts.get(s.message_id, {}), **mine}
    if _ONLY not in mine:  # both sides are shown, nil or not
        found = {"keyword": 0.0, "vector": 0.0, **found}
    kept = ("keyword", "vector")
    return tuple(
        (name, found[name]) for name in STAGES if name in found and (found[name] or name in kept)
    )


__all__ = ["STAGES", "Knobs", "Ranked", "Ranking", "Why"]

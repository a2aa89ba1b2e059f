"""Exact top-k BM25 without scoring every match: bounds per term set and length tier, a GIN
prefilter and a proof.

A document's BM25 is the sum, over the query terms it holds, of ``weight(t) * gain(tf, |D|)``
with ``gain = tf (k1 + 1) / (tf + k1 (1 - b + b |D| / avgdl))``, which rises with tf and
falls with |D|. ``fts_terms`` keeps, per memory and term, the largest tf and the shortest and
longest |D| of a document holding it (a deletion leaves them as they were: still bounds, only
looser). The keyword index files each lexeme of a document under the document's length tier
(:data:`LENGTH_TIERS`), so a query can ask for a term in short documents only. A document of
tier i holding exactly the terms S scores at most

    B(S, i) = sum over t in S of weight(t) * gain(max_tf(t), max(lo(i), L(S)))

with lo(i) the tier's shortest length and L(S) the longest of the terms' shortest |D|; tiers
wholly below L(S), or above the shortest of the terms' longest |D|, hold no such document.

A round has a threshold θ. Its clauses are the term sets that are, in some tier, minimal with
B(S, i) >= θ, each with the tiers where it is; a document matching no clause scores at most
:attr:`Round.floor`, the largest B of a (set, tier) that no clause covers (below θ). The GIN
index finds the documents that match the clauses (each clause its own scan); each one's own
bound (its terms, its |D|, their max tf) is checked, and those at or above the floor are
scored exactly. If the k-th best score found is above the floor, no unscored document can
reach or tie it: the result is exact. Otherwise that score is a lower bound of the true k-th
one and the next round uses it as θ (which then proves itself).

Pure functions over plain numbers; :mod:`.search` runs the rounds.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

K1 = 1.2
B = 0.75
#: FTS5's floor for the idf of a term in more than half of the documents.
MIN_IDF = 1e-6
#: Relative margin for comparisons of bounds with scores summed in another order.
SLACK = 1e-9
#: Query terms (distinct lexemes that occur in the scope) up to which rounds are planned; a
#: longer query scores every match, as it is cheaper than 2^n term sets.
MAX_PLANNED_TERMS = 14
#: Clauses of one round's GIN query at most (longer ones are shortened to their rarest terms).
MAX_CLAUSES = 32
#: Postings a clause's separate scans per tier and memory must save each (see
#: :func:`tsqueries`): swept at 100,000 and 1,000,000 entries, the least at which splitting
#: cost the smaller memory nothing measurable and still gave the larger one all its gain.
SPLIT_POSTINGS = 1000
#: Matches (sum of the terms' document frequencies, an upper bound) below which every match
#: is scored at once: a round would cost more than it saves.
SCORE_ALL_BELOW = 2000
#: The first round aims at this many expected documents per result asked for.
FIRST_ROUND_DOCS = 4
#: When a round's clauses match fewer documents than asked for, the next threshold is its
#: floor times this (a step down, not a jump to every match: at 1M entries scoring every
#: match takes seconds).
LOWER = 0.7
#: Where each length tier of the keyword index starts (tier 0 from 0 tokens): the same
#: boundaries as ``recallery_fts_tier`` in migration 11 (a test compares them). About 1.25
#: apart, so a document's length is known within a quarter.
LENGTH_TIERS = (8, 10, 13, 16, 20, 25, 32, 40, 50, 64, 80, 100, 128, 160, 200, 256, 320, 400, 512)
_LO = np.array((0, *LENGTH_TIERS), dtype=np.float64)
_HI = np.array((*LENGTH_TIERS, np.inf), dtype=np.float64)
#: A length typical of each tier (geometric middle; the last one a quarter above its start).
_MID = np.sqrt(np.maximum(_LO, 4.0) * np.append(_HI[:-1], _LO[-1] * 1.5625))
TIERS = len(_LO)
ALL_TIERS = tuple(range(TIERS))

#: A clause: term indexes (all of them) and the length tiers where it applies (any of them).
Clause = tuple[tuple[int, ...], tuple[int, ...]]


@dataclass(frozen=True)
class Term:
    """A query lexeme with its statistics over the memories searched."""

    lexeme: str
    weight: float  #: the sum of its idf over the query words that give this lexeme
    df: int
    max_tf: int
    min_len: int
    max_len: int = 2**31 - 1  #: the longest document holding it (tiers above hold none)


@dataclass(frozen=True)
class Round:
    """One round's GIN query (clauses, OR of ANDs) and what it proves."""

    threshold: float
    clauses: tuple[Clause, ...]
    #: Every document matching no clause scores at most this.
    floor: float


def idf(documents: float, containing: float) -> float:
    """FTS5's idf: ln((N - n + 0.5) / (n + 0.5)), at least :data:`MIN_IDF`."""
    return max(math.log((documents - containing + 0.5) / (containing + 0.5)), MIN_IDF)


def gain(tf: ArrayLike, length: ArrayLike, avgdl: float) -> NDArray[np.float64]:
    """BM25's saturated term frequency ``tf (k1 + 1) / (tf + k1 (1 - b + b |D| / avgdl))``."""
    f, n = np.asarray(tf, dtype=np.float64), np.asarray(length, dtype=np.float64)
    result: NDArray[np.float64] = f * (K1 + 1) / (f + K1 * (1 - B + B * n / avgdl))
    return result


def tier(length: int) -> int:
    """The length tier of a document of ``length`` tokens."""
    return int(np.searchsorted(LENGTH_TIERS, length, side="right"))


def tier_shares(
    common: Sequence[int], frequencies: Sequence[float], histogram: Sequence[int]
) -> NDArray[np.float64]:
    """Documents' fractions per length tier from PostgreSQL's column statistics of
    ``fts_len``: the most common lengths with their frequencies, the rest spread evenly over
    the histogram's buckets (each counted in the tier of its middle)."""
    shares = np.zeros(TIERS)
    for length, frequency in zip(common, frequencies, strict=True):
        shares[tier(length)] += frequency
    if len(histogram) > 1:
        rest = max(1.0 - float(sum(frequencies)), 0.0) / (len(histogram) - 1)
        for low, high in itertools.pairwise(histogram):
            shares[tier((low + high) // 2)] += rest
    return shares


def term_tiers(term: Term) -> tuple[int, ...]:
    """The tiers that can hold ``term``: from its shortest document's to its longest's."""
    return tuple(range(tier(term.min_len), tier(term.max_len) + 1))


def bound_terms(term: Term, avgdl: float) -> tuple[float, float, float]:
    """(a, c, d) with ``a / (c + d |D|)`` the most ``term`` adds to a document of length
    |D| holding it: the per-document bound the search checks in SQL."""
    return term.weight * term.max_tf * (K1 + 1), term.max_tf + K1 * (1 - B), K1 * B / avgdl


class Planner:
    """Rounds over at most :data:`MAX_PLANNED_TERMS` terms: B of every (term set, tier), once."""

    def __init__(self, terms: Sequence[Term], avgdl: float) -> None:
        self.terms = list(terms)
        n = len(self.terms)
        self.masks = np.arange(1 << n, dtype=np.int64)
        self.members = (self.masks[:, None] >> np.arange(n)) & 1 == 1
        min_len = np.array([t.min_len for t in self.terms], dtype=np.float64)
        max_len = np.array([t.max_len for t in self.terms], dtype=np.float64)
        shortest = np.where(self.members, min_len, 0.0).max(axis=1, initial=0.0)
        longest = np.where(self.members, max_len, np.inf).min(axis=1, initial=np.inf)
        length = np.maximum(shortest[:, None], _LO[None, :])
        bounds = np.zeros((len(self.masks), TIERS))
        for i, t in enumerate(self.terms):
            contribution = t.weight * gain(t.max_tf, length, avgdl)
            bounds += np.where(self.members[:, i, None], contribution, 0.0)
        # tiers wholly below a set's shortest length or above its longest hold no document
        bounds[(_HI[None, :] <= shortest[:, None]) | (_LO[None, :] > longest[:, None])] = 0.0
        self.bounds: NDArray[np.float64] = bounds
        self.df = np.array([t.df for t in self.terms], dtype=np.float64)

    def set_bound(self, mask: int) -> float:
        """The most a document holding exactly the terms of ``mask`` scores, any tier."""
        return float(self.bounds[mask].max())

    def first_threshold(
        self, documents: float, limit: float, shares: NDArray[np.float64] | None = None
    ) -> float:
        """A threshold whose clauses should hold about :data:`FIRST_ROUND_DOCS` x ``limit``
        documents (``limit`` scaled up when a filter is expected to drop some), were terms
        independent: (set, tier) cells in decreasing bound, each with the
        expected number of documents holding exactly that set in that tier. ``shares``: the
        documents' fractions per tier (:func:`tier_shares`); given a set, a tier's share is
        weighted by its length to the power of the set's size (a longer document is likelier
        to hold each term). Without them, each set at its best tier."""
        p = np.clip(self.df / max(documents, 1.0), 0.0, 1.0)
        exactly = np.where(self.members, p, 1.0 - p).prod(axis=1) * documents
        if shares is None or not shares.sum() > 0:
            best = self.bounds.max(axis=1)
            expected, cells = exactly[1:], best[1:]
        else:
            size = self.members.sum(axis=1)[:, None]
            weight = (shares * (_MID / _MID[0]) ** size) * (self.bounds > 0)
            total = weight.sum(axis=1, keepdims=True)
            share = np.divide(weight, total, out=np.zeros_like(weight), where=total > 0)
            expected, cells = (exactly[:, None] * share)[1:].ravel(), self.bounds[1:].ravel()
        order = np.argsort(-cells, kind="stable")
        reached = np.cumsum(expected[order]) >= FIRST_ROUND_DOCS * limit
        at = int(np.argmax(reached)) if reached.any() else len(order) - 1
        return float(cells[order[at]])

    def plan(self, threshold: float) -> Round:
        """The clauses for ``threshold`` (shortened if too many) and the floor they prove."""
        viable = self.bounds >= threshold * (1 - SLACK)
        viable[0] = False
        minimal = viable & ~self._below(self._covering(viable))
        found = np.flatnonzero(minimal.any(axis=1))
        clauses: dict[tuple[int, ...], set[int]] = {
            tuple(np.flatnonzero(self.members[m]).tolist()): set(
                np.flatnonzero(minimal[m]).tolist()
            )
            for m in found
        }
        for keep in (3, 2, 1):
            if len(clauses) <= MAX_CLAUSES:
                break
            shorter: dict[tuple[int, ...], set[int]] = {}
            for c, tiers in clauses.items():
                shorter.setdefault(self._rarest(c, keep), set()).update(tiers)
            clauses = shorter
        chosen = np.zeros_like(viable)
        for c, tiers in clauses.items():
            chosen[sum(1 << i for i in c), sorted(tiers)] = True
        covered = self._covering(chosen)
        covered[0] = True
        floor = float(self.bounds[~covered].max(initial=0.0))
        ordered = tuple(sorted((c, tuple(sorted(t))) for c, t in clauses.items()))
        return Round(threshold, ordered, floor)

    def _rarest(self, clause: tuple[int, ...], keep: int) -> tuple[int, ...]:
        return tuple(sorted(sorted(clause, key=lambda i: self.df[i])[:keep]))

    def _covering(self, sets: NDArray[np.bool_]) -> NDArray[np.bool_]:
        """Which (term set, tier) contain one of ``sets`` in that tier (a sum over subsets,
        bit by bit)."""
        covered = sets.copy()
        for bit in range(len(self.terms)):
            holding = self.masks[(self.masks >> bit) & 1 == 1]
            covered[holding] |= covered[holding ^ (1 << bit)]
        return covered

    def _below(self, covered: NDArray[np.bool_]) -> NDArray[np.bool_]:
        """Which (term set, tier) have a proper subset one term smaller that is covered."""
        below = np.zeros_like(covered)
        for bit in range(len(self.terms)):
            holding = self.masks[(self.masks >> bit) & 1 == 1]
            below[holding] |= covered[holding ^ (1 << bit)]
        return below


def next_threshold(
    current: Round, kth_score: float | None, kth_bound: float | None, smallest: float
) -> float | None:
    """After a round: None when the result is exact, else the next round's threshold.

    ``kth_score``: the k-th best score found so far (None while fewer); ``kth_bound``: the
    k-th largest per-document bound among this round's GIN matches (None while fewer);
    ``smallest``: the smallest single-term bound (below it a round holds every match)."""
    if kth_score is not None:
        return None if kth_score > current.floor * (1 + SLACK) else kth_score
    if current.floor <= 0.0:
        return None  # every match was scored
    if kth_bound is not None and kth_bound < current.threshold:
        return kth_bound
    lower = current.floor * LOWER
    return lower if lower >= smallest else 0.0


def quote(lexeme: str) -> str:
    """``lexeme`` as a tsquery operand (backslashes and quotes escaped)."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "\\'") + "'"


def memory_key(memory_id: str) -> str:
    """The memory part of the keyword index's keys: 8 hex digits of the id's md5."""
    return hashlib.md5(memory_id.encode()).hexdigest()[:8]


def person_key(user_id: str) -> str:
    """The person part of the keyword index's ``/person/memory`` key: 8 hex digits of the
    user id's md5."""
    return hashlib.md5(user_id.encode()).hexdigest()[:8]


def tsqueries(
    terms: Sequence[Term], clause: Clause, memories: Sequence[str], person: str | None = None
) -> list[str]:
    """One clause as tsqueries over the keyword index's ``lexeme/tier/memory`` keys, each
    its own scan of the index; a document's keys share one tier and memory, so a document
    matches where it holds every term of the clause in one of them. With ``person`` (a
    :func:`person_key`), each also asks for the document's ``/person/memory`` key: the index
    gives that person's matches only (the terms' postings are read, the person's skipped
    through).

    OR'd in one query (every tier and memory searched, ids as :func:`memory_key`), no key is
    required, and GIN reads every posting of every key. One query per tier and memory has
    every key required: GIN reads the rarest key's postings and skips through the others'.
    The scans are kept apart where skipping saves at least :data:`SPLIT_POSTINGS` postings
    a scan (bounded by the terms' document counts); at a million entries that took the
    first rounds' scans from 30.1 to 20.3 ms on average, at 100,000 it changed nothing, and
    splitting every clause cost 100,000 entries 8 %."""
    keys = [(k, m) for k in clause[1] for m in memories]
    ands = [" & ".join(quote(f"{terms[i].lexeme}/{k}/{m}") for i in clause[0]) for k, m in keys]
    counts = [terms[i].df for i in clause[0]]
    if len(ands) == 1 or sum(counts) - min(counts) >= SPLIT_POSTINGS * len(ands):
        queries = ands  # (a term alone saves nothing: its sum less its minimum is 0)
    else:
        queries = [" | ".join(a if len(counts) == 1 else f"({a})" for a in ands)]
    if person is None:
        return queries
    whose = " | ".join(quote(f"/{person}/{m}") for m in memories)
    return [f"({q}) & ({whose})" for q in queries]

"""A search's one read: every candidate with what ranking needs, drawn inside the store with
one filter (:class:`~recallery.requests.gathered.Gathered`). The ranking stages
(:mod:`recallery.retrieval.stages`) then run over plain data and never enter the store.

The read runs in order: the keyword and vector legs (and conversation windows), the
candidates' cosines with the lengths of the window candidates, the candidates the ranking's
pure ``leaders`` picks for conversation context, their neighbours with their cosines and
lengths, then the valid times and the turns superseding them where the search asks. Where the
store pays a round trip per read (PostgreSQL), each step's cosines and lengths are one read
(:meth:`~recallery.store.backend.Backend.cosines_and_lengths`). Extraction's near entries use
the legs alone (:func:`hybrid_candidates`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime

import numpy as np
from numpy.typing import NDArray

from recallery.clock import from_epoch
from recallery.models import Scope
from recallery.requests.gathered import Gathered, Pools, Wants
from recallery.store.filters import EntryFilter
from recallery.store.reader import Reader

Keyword = list[tuple[int, float]]
"""Keyword matches as (message_id, score), best first."""


def gather(
    r: Reader,
    scope: Scope,
    text: str,
    vector: NDArray[np.float32],
    f: EntryFilter,
    wants: Wants,
    keyword: Callable[[], tuple[Keyword, Keyword]] | None = None,
) -> Gathered:
    """Everything a search of ``text`` (its vector ``vector``) needs, as ``wants`` says.
    ``keyword``: the keyword and window legs' result where they were started already
    (:meth:`Store.beside`)."""
    lengths: dict[int, int] | None = {} if wants.lengths else None
    pools = candidate_pools(r, scope, text, vector, f, wants.pool, wants.windows, keyword, lengths)
    cosine = dict(pools.cosine)
    neighbours: dict[int, tuple[tuple[int, ...], ...]] = {}
    if wants.span > 0 and wants.leaders is not None:
        leaders = wants.leaders(pools, lengths or {})
        neighbours = r.neighbours(scope, leaders, f, wants.span, theirs=True)
        everyone = {n for rings in neighbours.values() for ring in rings for n in ring}
        _cosines_and_lengths(
            r, scope, vector, cosine, everyone | neighbours.keys(), lengths, neighbours
        )
    times = _times(r, scope, cosine) if wants.times else {}
    found = Gathered(pools, cosine, neighbours, lengths or {}, times)
    return _superseding(r, scope, f, found, vector, wants.hops) if wants.hops else found


def _times(r: Reader, scope: Scope, ids: Iterable[int]) -> dict[int, datetime]:
    """The valid times of ``ids`` (one query, no entries built)."""
    rows = r._by_id(scope, ids, "e.message_id, e.valid_at")
    return {int(i): t for i, at in rows if (t := from_epoch(at)) is not None}


def _superseding(
    r: Reader, scope: Scope, f: EntryFilter, found: Gathered, vector: NDArray[np.float32], hops: int
) -> Gathered:
    """``found`` with the latest turn superseding each candidate (followed through up to
    ``hops`` links) where it passes the search's filter, both ends' entries and the newer
    one's cosine."""
    links = r.superseding(found.cosine)
    for _ in range(hops):
        further = r.superseding(set(links.values()))
        if not further:
            break
        links = {old: further.get(new, new) for old, new in links.items()}
    allowed = r.passing(scope, f, set(links.values()))
    newer = {old: new for old, new in links.items() if new in allowed and new != old}
    if not newer:
        return found
    linked = r.get_entries(scope, {*newer, *newer.values()})
    cosines = r.cosines(sorted(set(newer.values())), vector, scope)
    times = dict(found.times)
    if found.times:
        times |= {i: e.valid_at for i, e in linked.items() if i not in times}
    return Gathered(
        found.pools,
        found.cosine,
        found.neighbours,
        found.lengths,
        times,
        newer,
        linked,
        cosines,
    )


def candidate_pools(
    r: Reader,
    scope: Scope,
    text: str,
    vector: NDArray[np.float32],
    f: EntryFilter,
    pool: int,
    windows: int = 0,
    keyword: Callable[[], tuple[Keyword, Keyword]] | None = None,
    lengths: dict[int, int] | None = None,
) -> Pools:
    """The best ``pool`` keyword matches and vector neighbours and the best ``windows``
    conversation windows, with the cosine similarity of every candidate of any leg (a
    vector of another dimension: 0); ``lengths``, where given, is filled in with the lengths
    of the window candidates' raw turns."""
    leg = r.vector_candidates(scope, vector, f, pool)
    if keyword is None:
        matches, held = r.keyword_and_windows(scope, text, f, pool, windows)
    else:
        matches, held = keyword()
    cosine = dict(leg)
    found = [i for i, _ in matches] + [i for i, _ in held]
    _cosines_and_lengths(r, scope, vector, cosine, found, lengths, [i for i, _ in held])
    return Pools(matches, cosine, leg, held)


def _cosines_and_lengths(
    r: Reader,
    scope: Scope,
    vector: NDArray[np.float32],
    cosine: dict[int, float],
    ids: Iterable[int],
    lengths: dict[int, int] | None,
    length_ids: Iterable[int],
) -> None:
    """Fill in the cosines of ``ids`` not in ``cosine`` and, where ``lengths`` is given, the
    lengths of the raw turns among ``length_ids`` not in it: in one read where the backend
    folds the two (PostgreSQL, a round trip each), else each from its own read."""
    need = [i for i in ids if i not in cosine]
    measure = [] if lengths is None else [i for i in length_ids if i not in lengths]
    both = None
    if need and measure:
        both = r.store.cosines_and_lengths(r.conn, scope, need, measure, vector)
    if both is not None and lengths is not None:
        cosine.update(both[0])
        lengths.update(both[1])
        return
    cosine.update(r.cosines(need, vector, scope))
    if measure and lengths is not None:
        lengths.update(r.lengths(scope, measure))


def hybrid_candidates(
    r: Reader, scope: Scope, text: str, vector: NDArray[np.float32], f: EntryFilter, pool: int
) -> tuple[list[tuple[int, float]], dict[int, float]]:
    """The best ``pool`` keyword matches (id, BM25 score) and the cosine similarity of every
    candidate of either leg, keyword-only ones included (a vector of another dimension: 0)."""
    found = candidate_pools(r, scope, text, vector, f, pool)
    return found.keyword, found.cosine


def add_cosines(
    r: Reader,
    scope: Scope,
    cosine: dict[int, float],
    ids: Iterable[int],
    vector: NDArray[np.float32],
) -> None:
    """Fill in the cosine similarity of ``ids`` (entries of ``scope``) not yet in ``cosine``
    (another dimension: 0)."""
    cosine.update(r.cosines([i for i in ids if i not in cosine], vector, scope))


__all__ = ["add_cosines", "candidate_pools", "gather", "hybrid_candidates"]

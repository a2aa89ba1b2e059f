"""A search's one read: every candidate with what ranking needs, drawn inside the store with
one filter (:class:`~recallery.requests.gathered.Gathered`). The ranking stages
(:mod:`recallery.retrieval.stages`) then run over plain data and never enter the store.

The read runs in order: the keyword and vector legs (and conversation windows), the
candidates' cosines with the lengths of the window candidates, the candidates the ranking's
pure ``leaders`` picks for conversation context, their neighbours with their cosines and
lengths, then the valid times and the turns superseding them where the search asks. Where the
store pays a round trip per read (PostgreSQL), it answers in two steps
(:mod:`~recallery.store.steps`): the vector leg while the keyword legs run beside it and read
their candidates' cosines and lengths, then everything after the leaders; the same code below
then takes each answer from the step, and reads apart only what a step did not read.
Extraction's near entries use the legs alone (:func:`hybrid_candidates`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from datetime import datetime

import numpy as np
from numpy.typing import NDArray

from recallery.clock import from_epoch
from recallery.models import Entry, EntryType, Scope
from recallery.ownership import Person, person, person_of
from recallery.requests.gathered import Gathered, Pools, Wants
from recallery.store.filters import EntryFilter
from recallery.store.neighbours import reach, visible_neighbours
from recallery.store.reader import Reader
from recallery.store.steps import KeywordStep, SecondStep


def gather(
    r: Reader,
    scope: Scope,
    text: str,
    vector: NDArray[np.float32],
    f: EntryFilter,
    wants: Wants,
    keyword: Callable[[], KeywordStep] | None = None,
) -> Gathered:
    """Everything a search of ``text`` (its vector ``vector``) needs, as ``wants`` says.
    ``keyword``: the keyword and window legs' result where they were started already
    (:meth:`Store.beside`)."""
    lengths: dict[int, int] | None = {} if wants.lengths else None
    pools = candidate_pools(r, scope, text, vector, f, wants.pool, wants.windows, keyword, lengths)
    cosine = dict(pools.cosine)
    leaders = None
    if wants.span > 0 and wants.leaders is not None:
        leaders = wants.leaders(pools, lengths or {})
    reads = _Reads(r, scope, f, vector)
    if r.store.gathers_in_steps and (leaders is not None or wants.times or wants.hops):
        centres = _centres(scope, f, leaders or (), wants.span)
        step = r.store.second_step(
            r.conn, scope, f, vector, list(cosine), centres, reach(wants.span) * 2, wants.hops
        )
        if step is not None:
            reads = _Stepped(r, scope, f, vector, step, centres, reach(wants.span) * 2)
    neighbours: dict[int, tuple[tuple[int, ...], ...]] = {}
    if leaders is not None:
        neighbours = reads.neighbours(leaders, wants.span)
        everyone = {n for rings in neighbours.values() for ring in rings for n in ring}
        need = [i for i in everyone | neighbours.keys() if i not in cosine]
        cosine.update(reads.cosines(need))
        if lengths is not None:
            lengths.update(reads.lengths([i for i in neighbours if i not in lengths]))
    lengths = lengths or {}
    placed: Collection[int] = cosine.keys()
    if wants.placed is not None and (wants.times or wants.hops):
        placed = wants.placed(pools, cosine, neighbours, lengths)
    times, people = reads.times(placed) if wants.times else ({}, {})
    found = Gathered(pools, cosine, neighbours, lengths, times, people)
    return _superseding(reads, found, placed, wants.hops) if wants.hops else found


def _centres(scope: Scope, f: EntryFilter, leaders: Iterable[int], span: int) -> list[int]:
    """The leaders whose conversations :meth:`Reader.neighbours` would look up."""
    raw = f.types is None or EntryType.RAW in f.types
    return sorted(set(leaders)) if scope and span >= 1 and raw else []


class _Reads:
    """The reads after the leaders, each from the reader."""

    def __init__(self, r: Reader, scope: Scope, f: EntryFilter, vector: NDArray[np.float32]):
        self.r, self.scope, self.f, self.vector = r, scope, f, vector

    def neighbours(self, ids: Iterable[int], span: int) -> dict[int, tuple[tuple[int, ...], ...]]:
        return self.r.neighbours(self.scope, ids, self.f, span, theirs=True)

    def cosines(self, ids: Sequence[int]) -> dict[int, float]:
        return self.r.cosines(ids, self.vector, self.scope)

    def lengths(self, ids: Sequence[int]) -> dict[int, int]:
        return self.r.lengths(self.scope, ids)

    def times(self, ids: Iterable[int]) -> tuple[dict[int, datetime], dict[int, Person]]:
        """The valid times of ``ids`` and whose each is (no entries built)."""
        rows = self.r.valid_times(self.scope, ids)
        timed = [(int(i), t, person_of(m, u)) for i, at, m, u in rows if (t := from_epoch(at))]
        return {i: t for i, t, _ in timed}, {i: p for i, _, p in timed}

    def chains(self, ids: Collection[int], hops: int) -> dict[int, int]:
        """For each of ``ids`` that a later turn supersedes, the turn reached by following
        the latest link, then up to ``hops`` more."""
        links = self.r.superseding(ids)
        for _ in range(hops):
            further = self.r.superseding(set(links.values()))
            if not further:
                break
            links = {old: further.get(new, new) for old, new in links.items()}
        return links

    def passing(self, ids: Iterable[int]) -> set[int]:
        return self.r.passing(self.scope, self.f, ids)

    def entries(self, ids: Iterable[int]) -> dict[int, Entry]:
        return self.r.get_entries(self.scope, ids)


class _Stepped(_Reads):
    """The same reads answered from the backend's second step for the turns it read; any
    other turn is read apart (none, where the step read what it was asked)."""

    def __init__(
        self,
        r: Reader,
        scope: Scope,
        f: EntryFilter,
        vector: NDArray[np.float32],
        step: SecondStep,
        centres: Sequence[int],
        far: int,
    ) -> None:
        super().__init__(r, scope, f, vector)
        self.step, self.centres, self.far = step, frozenset(centres), far

    def _split(self, ids: Iterable[int]) -> tuple[list[int], list[int]]:
        read = self.step.read
        wanted = list(dict.fromkeys(ids))
        return [i for i in wanted if i in read], [i for i in wanted if i not in read]

    def neighbours(self, ids: Iterable[int], span: int) -> dict[int, tuple[tuple[int, ...], ...]]:
        wanted = set(_centres(self.scope, self.f, ids, span))
        if wanted != self.centres or reach(span) * 2 != self.far:
            return super().neighbours(ids, span)
        near = {i: self.step.near[i] for i in sorted(wanted) if i in self.step.near}
        return visible_neighbours(near, span, self.passing, theirs=True)

    def cosines(self, ids: Sequence[int]) -> dict[int, float]:
        known, other = self._split(ids)
        found = {i: self.step.cosine[i] for i in known if i in self.step.cosine}
        return found | (super().cosines(other) if other else {})

    def lengths(self, ids: Sequence[int]) -> dict[int, int]:
        known, other = self._split(ids)
        found = {i: self.step.lengths[i] for i in known if i in self.step.lengths}
        return found | (super().lengths(other) if other else {})

    def times(self, ids: Iterable[int]) -> tuple[dict[int, datetime], dict[int, Person]]:
        known, other = self._split(ids)
        found = {i: self.step.times[i] for i in known if i in self.step.times}
        people = {i: self.step.people[i] for i in found}
        if not other:
            return found, people
        more, theirs = super().times(other)
        return found | more, people | theirs

    def chains(self, ids: Collection[int], hops: int) -> dict[int, int]:
        wanted = list(dict.fromkeys(ids))
        known = [i for i in wanted if i in self.step.followed]
        other = [i for i in wanted if i not in self.step.followed]
        found = {i: self.step.links[i] for i in known if i in self.step.links}
        return found | (super().chains(other, hops) if other else {})

    def passing(self, ids: Iterable[int]) -> set[int]:
        known, other = self._split(ids)
        found = {i for i in known if i in self.step.passes}
        return found | (super().passing(other) if other else set())

    def entries(self, ids: Iterable[int]) -> dict[int, Entry]:
        wanted = list(dict.fromkeys(ids))
        found = {i: self.step.entries[i] for i in wanted if i in self.step.entries}
        other = [i for i in wanted if i not in found]
        return found | (super().entries(other) if other else {})


def _superseding(reads: _Reads, found: Gathered, ids: Collection[int], hops: int) -> Gathered:
    """``found`` with the latest turn superseding each of ``ids`` (followed through up to
    ``hops`` links) where it passes the search's filter, both ends' entries and the newer
    one's cosine."""
    links = reads.chains(ids, hops)
    allowed = reads.passing(set(links.values()))
    newer = {old: new for old, new in links.items() if new in allowed and new != old}
    if not newer:
        return found
    linked = reads.entries({*newer, *newer.values()})
    cosines = reads.cosines(sorted(set(newer.values())))
    times, people = dict(found.times), dict(found.people)
    if found.times:
        times |= {i: e.valid_at for i, e in linked.items() if i not in times}
        people |= {i: person(e) for i, e in linked.items() if i not in people}
    return Gathered(
        found.pools,
        found.cosine,
        found.neighbours,
        found.lengths,
        times,
        people,
        superseding=newer,
        linked=linked,
        linked_cosine=cosines,
    )


def candidate_pools(
    r: Reader,
    scope: Scope,
    text: str,
    vector: NDArray[np.float32],
    f: EntryFilter,
    pool: int,
    windows: int = 0,
    keyword: Callable[[], KeywordStep] | None = None,
    lengths: dict[int, int] | None = None,
) -> Pools:
    """The best ``pool`` keyword matches and vector neighbours and the best ``windows``
    conversation windows, with the cosine similarity of every candidate of any leg (a
    vector of another dimension: 0); ``lengths``, where given, is filled in with the lengths
    of the window candidates' raw turns. Where the backend answers in steps, the vector leg
    is read while the keyword legs run beside (``keyword``), or after them with the
    cosines and lengths they did not read (:mod:`~recallery.store.steps`)."""
    if r.store.gathers_in_steps:
        stepped = _pools_in_steps(r, scope, text, vector, f, pool, windows, keyword, lengths)
        if stepped is not None:
            return stepped
    leg = r.vector_candidates(scope, vector, f, pool)
    legs = _keyword(r, scope, text, f, pool, windows, keyword)
    matches, held = legs.keyword, legs.windows
    cosine = dict(leg)
    found = [i for i, _ in matches] + [i for i, _ in held]
    cosine.update(r.cosines([i for i in found if i not in cosine], vector, scope))
    measure = [] if lengths is None else [i for i, _ in held if i not in lengths]
    if measure and lengths is not None:
        lengths.update(r.lengths(scope, measure))
    return Pools(matches, cosine, leg, held)


def _pools_in_steps(
    r: Reader,
    scope: Scope,
    text: str,
    vector: NDArray[np.float32],
    f: EntryFilter,
    pool: int,
    windows: int,
    keyword: Callable[[], KeywordStep] | None,
    lengths: dict[int, int] | None,
) -> Pools | None:
    """:func:`candidate_pools` from the backend's first step: the vector leg alone while
    the keyword legs run beside, then what they did not read (nothing, where they read
    their candidates' cosines and lengths); after them, with all of it, where they ran in
    the caller. None where the backend offers no step."""
    ahead = r.store.first_step(r.conn, scope, vector, f, pool, [], []) if keyword else None
    legs = _keyword(r, scope, text, f, pool, windows, keyword)
    found = [i for i, _ in legs.keyword] + [i for i, _ in legs.windows]
    measure = [] if lengths is None else [i for i, _ in legs.windows if i not in lengths]
    step = ahead
    unread = [i for i in found if i not in legs.read]
    if ahead is None or unread:
        unmeasured = [i for i in measure if i not in legs.read]
        limit = pool if ahead is None else 0
        step = r.store.first_step(r.conn, scope, vector, f, limit, unread, unmeasured)
    if step is None:
        return None
    leg = (ahead or step).vector if scope and pool > 0 else []
    cosine = dict(leg)
    known = {**step.cosine, **legs.cosine}
    cosine.update({i: known[i] for i in found if i in known and i not in cosine})
    if lengths is not None:
        read = {**step.lengths, **legs.lengths}
        lengths.update({i: read[i] for i in measure if i in read})
    return Pools(legs.keyword, cosine, leg, legs.windows)


def _keyword(
    r: Reader,
    scope: Scope,
    text: str,
    f: EntryFilter,
    pool: int,
    windows: int,
    keyword: Callable[[], KeywordStep] | None,
) -> KeywordStep:
    return keyword() if keyword else r.keyword_and_windows(scope, text, f, pool, windows)


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

"""The search plan's pieces over a store reader: how many candidates each leg draws, how far
conversation context and time reach, the latest turn superseding each ranked one, and the
share of its context each candidate takes. The search service (:mod:`recallery.services.search`)
runs the plan after its permission checks; the pure scoring is the rest of this package."""

from __future__ import annotations

from collections.abc import Iterable

from recallery.models import Entry, Scope
from recallery.retrieval.adaptive import context_shares
from recallery.retrieval.fusion import Scored
from recallery.retrieval.supersede import with_superseding
from recallery.store.filters import EntryFilter
from recallery.store.reader import Reader

#: Each leg draws ``max(POOL_FACTOR * top_n, MIN_POOL)`` candidates.
POOL_FACTOR, MIN_POOL = 4, 50
#: Conversation windows (a raw turn with the turns it answers) drawn: ``max(top_n, MIN_WINDOWS)``;
#: a window lifts an entry into the results, so windows further down change nothing.
MIN_WINDOWS = 20
#: Conversation context is looked up for the best ``CONTEXT_FACTOR * top_n`` candidates by
#: their own score (at least ``MIN_CONTEXT``): further down, no bonus reaches the top.
CONTEXT_FACTOR, MIN_CONTEXT = 3, 30
#: Time in the ranking (``SearchRequest.recency_weight`` and ``recency_plain``, declared with
#: their defaults in :mod:`recallery.requests`): how many of the best candidates the prior
#: reorders (at least ``top_n``). Off by default: on cued queries at 1.0 it cost LoCoMo R@10
#: through REST 0.3 (78.7 -> 78.4; 6-10: 76.8 -> 76.2), a prior on plain queries too (0.3)
#: 1.0 (benchmarks/README.md).
RECENCY_POOL = 30
#: Time orders the band of a question about the present (``SearchRequest.recency_band``) among
#: the first ``BAND_WINDOW`` candidates only: what an agent reads first is reordered, and no
#: candidate from further down joins them, so what is found (recall at ten) stays as it was.
BAND_WINDOW = 10
#: Supersession of raw turns (``SearchRequest.supersession``): how many links are followed
#: from a ranked turn to the latest one.
SUPERSESSION_HOPS = 3


def superseding(
    r: Reader,
    scope: Scope,
    f: EntryFilter,
    ranked: list[Scored],
    weight: float,
    entries: dict[int, Entry],
) -> list[Scored]:
    """``ranked`` with the latest turn superseding each ranked one (followed through up to
    :data:`SUPERSESSION_HOPS` links) just above it, where it passes the search's filter;
    its entry joins ``entries``."""
    links = r.superseding(s.message_id for s in ranked)
    for _ in range(SUPERSESSION_HOPS):
        further = r.superseding(set(links.values()))
        if not further:
            break
        links = {old: further.get(new, new) for old, new in links.items()}
    allowed = r.passing(scope, f, set(links.values()))
    newer = {old: new for old, new in links.items() if new in allowed}
    out = with_superseding(ranked, newer, weight=weight, limit=len(ranked))
    entries |= r.get_entries(scope, [s.message_id for s in out if s.message_id not in entries])
    return out


def shares(
    r: Reader, scope: Scope, ids: Iterable[int], full: int, lengths: dict[int, int]
) -> dict[int, float] | None:
    """The share of its conversation context each turn whose length ``lengths`` holds takes
    (None: all of it), after reading the lengths of ``ids`` it lacks into it."""
    if full <= 0:
        return None
    lengths |= r.lengths(scope, [i for i in ids if i not in lengths])
    return context_shares(lengths, full)


__all__ = [
    "BAND_WINDOW",
    "CONTEXT_FACTOR",
    "MIN_CONTEXT",
    "MIN_POOL",
    "MIN_WINDOWS",
    "POOL_FACTOR",
    "RECENCY_POOL",
    "SUPERSESSION_HOPS",
    "shares",
    "superseding",
]

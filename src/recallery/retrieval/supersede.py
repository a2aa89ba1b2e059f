"""Supersession in the ranking: a turn that a later one of the same user supersedes
(:mod:`recallery.text.slots`) brings that later turn in just above itself. Pure.

The old statement is often the canonical phrasing ("I live in the Plateau, Montreal") and
the change event ("moving into our new flat in the Annex") shares no words with the query,
so relevance alone ranks the stale turn first and may not find the current one at all. The
older turn stays where it was: kept, never hidden.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from recallery.retrieval.fusion import Scored

#: How far above the older turn the newer one is placed.
EPSILON = 1e-6


def with_superseding(
    ranked: Sequence[Scored],
    newer: Mapping[int, int],
    *,
    weight: float,
    limit: int | None = None,
) -> list[Scored]:
    """``ranked`` (best first) with each turn that supersedes a ranked one (``newer``: the
    older id to the newer one's, only newer ones the caller may return) scored at least
    ``weight`` times the older one's score plus :data:`EPSILON` (1: just above it); the
    best ``limit``."""
    if weight <= 0 or not newer:
        return list(ranked[:limit])
    by_id = {s.message_id: s for s in ranked}
    for s in ranked:
        later = newer.get(s.message_id)
        if later is None or later == s.message_id:
            continue
        floor = weight * s.score + EPSILON
        current = by_id.get(later)
        if current is None:
            by_id[later] = Scored(later, floor, 0.0, 0.0)
        elif current.score < floor:
            by_id[later] = replace(current, score=floor)
    out = sorted(by_id.values(), key=lambda s: (-s.score, -s.message_id))
    return out[:limit]


__all__ = ["EPSILON", "with_superseding"]

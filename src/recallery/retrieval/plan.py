"""The search plan's sizes: how many candidates each leg draws, and how far conversation
context, time and supersession reach. The search gathers what these say in one read
(:mod:`recallery.store.gather`) and ranks it in pure stages (:mod:`recallery.retrieval.stages`)."""

from __future__ import annotations

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


__all__ = [
    "BAND_WINDOW",
    "CONTEXT_FACTOR",
    "MIN_CONTEXT",
    "MIN_POOL",
    "MIN_WINDOWS",
    "POOL_FACTOR",
    "RECENCY_POOL",
    "SUPERSESSION_HOPS",
]

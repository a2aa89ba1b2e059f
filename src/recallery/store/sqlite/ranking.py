"""The best candidates of a search leg that pass its filter, from scores held in arrays.

The in-process legs score every match of a memory (tens of thousands at 100k entries) and
want the best few dozen that the search's filter lets through. Sorting every score would cost
more than the scoring, so the best few are taken first (a partition, not a sort) and checked;
while too few pass, the window widens as far as the pass rate so far says it must.

The check is a mask over an array of ids: the filter columns held in memory answer one in a
few array operations (:class:`~.columns.HeldCheck`); any other check (SQL, inside a write
transaction) is asked only about ids it has not seen yet.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from recallery.store.queries import Passing
from recallery.store.sqlite.columns import HeldCheck

Mask = Callable[[NDArray[np.int64]], NDArray[np.bool_]]
"""Which of an array of ids pass, as booleans in its order."""


def best_passing(
    ids: NDArray[np.int64], scores: NDArray[np.floating[Any]], limit: int, passing: Passing
) -> list[tuple[int, float]]:
    """The ``limit`` best (id, score) whose ids pass the filter, equal scores newer first (as
    fusion orders them). The best few are checked first, with every id tied with the last of
    them; while too few pass, the window grows as far as the pass rate so far says it must
    (at least double, at most eightfold)."""
    return _best(ids, scores, limit, as_mask(passing))


def best(
    ids: NDArray[np.int64], scores: NDArray[np.floating[Any]], limit: int
) -> list[tuple[int, float]]:
    """The ``limit`` best (id, score) of candidates that passed already, in the order
    :func:`best_passing` gives."""
    return _best(ids, scores, limit, lambda at: np.ones(len(at), np.bool_))


def _best(
    ids: NDArray[np.int64], scores: NDArray[np.floating[Any]], limit: int, allowed: Mask
) -> list[tuple[int, float]]:
    kept = np.empty(0, np.int64)
    take = min(len(ids), max(4 * limit, 64))
    while take:
        if take < len(ids):  # the take-th best score: a partition of the values alone
            edge = np.partition(scores, len(ids) - take)[len(ids) - take]
            top = np.flatnonzero(scores >= edge)
        else:
            top = np.arange(len(ids))
        top = top[np.lexsort((-ids[top], -scores[top]))]
        kept = top[allowed(ids[top])]
        if len(kept) >= limit or take == len(ids):
            break
        needed = math.ceil(1.5 * limit * take / max(len(kept), 1))
        take = min(len(ids), max(2 * take, min(8 * take, needed)))
    kept = kept[:limit]
    return list(zip(ids[kept].tolist(), scores[kept].tolist(), strict=True))


def as_mask(passing: Passing) -> Mask:
    """``passing`` as a mask: the held columns' own, else one that asks ``passing`` about each
    id once."""
    if isinstance(passing, HeldCheck):
        return passing.mask
    known: dict[int, bool] = {}

    def mask(ids: NDArray[np.int64]) -> NDArray[np.bool_]:
        asked = ids.tolist()
        fresh = [i for i in asked if i not in known]
        if fresh:
            allowed = passing(fresh)
            known.update((i, i in allowed) for i in fresh)
        return np.fromiter((known[i] for i in asked), np.bool_, len(asked))

    return mask

"""The two candidate pools of hybrid search, drawn inside the store with one filter."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from recallery.models import Scope
from recallery.store.filters import EntryFilter
from recallery.store.reader import Reader

Keyword = list[tuple[int, float]]
"""Keyword matches as (message_id, score), best first."""


@dataclass(frozen=True)
class Pools:
    """The candidates of every leg: keyword matches best first, the cosine similarity of
    every candidate of any leg, the vector leg's own similarities best first, and the best
    conversation windows (empty unless asked for and the store scores them)."""

    keyword: list[tuple[int, float]]
    cosine: dict[int, float]
    vector: list[tuple[int, float]]
    windows: list[tuple[int, float]]


def candidate_pools(
    r: Reader,
    scope: Scope,
    text: str,
    vector: NDArray[np.float32],
    f: EntryFilter,
    pool: int,
    windows: int = 0,
    keyword: Callable[[], tuple[Keyword, Keyword]] | None = None,
) -> Pools:
    """The best ``pool`` keyword matches and vector neighbours and the best ``windows``
    conversation windows, with the cosine similarity of every candidate of any leg (a
    vector of another dimension: 0). ``keyword``: the keyword and window legs' result where
    they were started already (:meth:`Store.beside`)."""
    leg = r.vector_candidates(scope, vector, f, pool)
    if keyword is None:
        matches, held = r.keyword_and_windows(scope, text, f, pool, windows)
    else:
        matches, held = keyword()
    cosine = dict(leg)
    add_cosines(r, scope, cosine, [i for i, _ in matches] + [i for i, _ in held], vector)
    return Pools(matches, cosine, leg, held)


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


def with_neighbours(
    r: Reader,
    scope: Scope,
    f: EntryFilter,
    candidates: Iterable[int],
    span: int,
    cosine: dict[int, float],
    vector: NDArray[np.float32],
) -> dict[int, tuple[tuple[int, ...], ...]]:
    """Conversation neighbours of the candidates and of the neighbours themselves; every
    neighbour joins the pool with its cosine similarity (its keyword score stays 0 unless it
    was a keyword candidate)."""
    neighbours = r.neighbours(scope, candidates, f, span, theirs=True)
    everyone = {n for rings in neighbours.values() for ring in rings for n in ring}
    add_cosines(r, scope, cosine, everyone | neighbours.keys(), vector)
    return neighbours

"""The two candidate pools of hybrid search, drawn inside the store with one filter."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from memstrata.models import Scope
from memstrata.store.base import Reader
from memstrata.store.filters import EntryFilter


def hybrid_candidates(
    r: Reader, scope: Scope, text: str, vector: NDArray[np.float32], f: EntryFilter, pool: int
) -> tuple[list[tuple[int, float]], dict[int, float]]:
    """The best ``pool`` keyword matches (id, BM25 score) and the cosine similarity of every
    candidate of either leg, keyword-only ones included (a vector of another dimension: 0)."""
    keyword = r.keyword_candidates(scope, text, f, pool)
    cosine = dict(r.vector_candidates(scope, vector, f, pool))
    missing = [i for i, _ in keyword if i not in cosine]
    for i, stored in r.vectors(missing).items():
        cosine[i] = float(stored @ vector) if stored.shape == vector.shape else 0.0
    return keyword, cosine

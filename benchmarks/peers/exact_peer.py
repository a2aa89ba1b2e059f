"""Reference driver: exact cosine search with numpy over the same vectors (no peer library).

Every pure-dense peer should match its recall up to ANN approximation and ties.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from benchmarks.peers.base import DIM, EmbedFn, Item, Vectors


class ExactCosineDriver:
    """Per-user matrices of unit vectors; search is one matrix-vector product."""

    name = "exact-cosine"

    def __init__(self, embed: EmbedFn | None) -> None:
        self.vectors = Vectors(embed)
        self._ids: dict[str, list[str]] = {}
        self._rows: dict[str, NDArray[np.float32]] = {}

    def add(self, items: Sequence[Item]) -> None:
        vectors = self.vectors.items(items)
        for item, vector in zip(items, vectors, strict=True):
            self._ids.setdefault(item.user_id, []).append(item.id)
            rows = self._rows.get(item.user_id, np.empty((0, DIM), dtype=np.float32))
            self._rows[item.user_id] = np.vstack([rows, vector[None, :]])

    def search(
        self, user_id: str, query_text: str, query_vector: NDArray[np.float32] | None, k: int
    ) -> list[str]:
        scores = self._rows[user_id] @ self.vectors.query(query_text, query_vector)
        order = np.argsort(-scores, kind="stable")[:k]
        return [self._ids[user_id][i] for i in order]

    def close(self) -> None:
        self._rows.clear()


def exact(workdir: Path, embed: EmbedFn | None) -> ExactCosineDriver:
    return ExactCosineDriver(embed)

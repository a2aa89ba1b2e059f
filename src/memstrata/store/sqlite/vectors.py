"""An in-process copy of the stored vectors, indexed by message id, for exact search.

Vectors never change once written (a correction is a new entry with a new id), so the copy
can only be behind, never wrong: :meth:`VectorCache.sync` loads whatever was committed since
the last look (by this process or another), and erasure drops rows at once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

Loader = Callable[[int], list[tuple[int, bytes]]]


class VectorCache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows: dict[int, NDArray[np.float32]] = {}
        self._present: dict[int, NDArray[np.bool_]] = {}
        self._high = 0

    def sync(self, load_after: Loader) -> None:
        """Load vectors of every entry with a message id above the high-water mark."""
        with self._lock:
            rows = load_after(self._high)
            if not rows:
                return
            by_dim: dict[int, list[tuple[int, bytes]]] = {}
            for message_id, blob in rows:
                by_dim.setdefault(len(blob) // 4, []).append((message_id, blob))
            for dim, items in by_dim.items():
                ids = np.fromiter((i for i, _ in items), dtype=np.int64, count=len(items))
                data = np.frombuffer(b"".join(b for _, b in items), dtype=np.float32)
                self._store(dim, ids, data.reshape(len(items), dim))
            self._high = max(self._high, max(i for i, _ in rows))

    def put(self, ids: Sequence[int], vectors: NDArray[np.float32]) -> None:
        if not len(ids):
            return
        with self._lock:
            self._store(vectors.shape[1], np.asarray(ids, dtype=np.int64), vectors)

    def drop(self, ids: Sequence[int]) -> None:
        with self._lock:
            for dim, matrix in self._rows.items():
                present = self._present[dim]
                for i in ids:
                    if i < len(present):
                        present[i] = False
                        matrix[i] = 0.0

    def scores(
        self, ids: NDArray[np.int64], query: NDArray[np.float32]
    ) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        """Cosine similarity of ``query`` with each of ``ids`` that has a vector of its size."""
        dim = query.shape[0]
        with self._lock:
            matrix = self._rows.get(dim)
            if matrix is None or not len(ids):
                return np.empty(0, np.int64), np.empty(0, np.float32)
            present = self._present[dim]
            ids = ids[ids < len(present)]
            ids = ids[present[ids]]
            sims = matrix[ids] @ query
        return ids, sims.astype(np.float32, copy=False)

    def _store(self, dim: int, ids: NDArray[np.int64], vectors: NDArray[np.float32]) -> None:
        top = int(ids.max()) + 1
        matrix = self._rows.get(dim)
        if matrix is None or len(matrix) < top:
            size = max(top, 2 * (0 if matrix is None else len(matrix)), 1024)
            grown = np.zeros((size, dim), dtype=np.float32)
            present = np.zeros(size, dtype=np.bool_)
            if matrix is not None:
                grown[: len(matrix)] = matrix
                present[: len(matrix)] = self._present[dim]
            self._rows[dim], self._present[dim] = grown, present
            matrix = grown
        matrix[ids] = vectors
        self._present[dim][ids] = True

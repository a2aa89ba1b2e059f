"""An in-process copy of the stored vectors, one contiguous matrix per memory, for exact search.

Vectors never change once written (a correction is a new entry with a new id), so the copy
can only be behind, never wrong: :meth:`VectorCache.sync` loads whatever was committed since
the last look, by this process or another. SQLite commits writers one at a time and message
ids only grow, so the committed ids always form a prefix and a high-water mark is enough.
Erasure drops rows at once; a row another process erased is never returned because the SQL
filter runs on every candidate.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

G = TypeVar("G", bound=np.generic)
Loader = Callable[[int], list[tuple[int, str, bytes]]]
"""Returns (message_id, memory_id, float32 blob) of rows with a message id above the mark."""


@dataclass
class _Block:
    """The vectors of one memory, in message-id order."""

    dim: int
    ids: NDArray[np.int64] = field(default_factory=lambda: np.empty(0, np.int64))
    rows: NDArray[np.float32] = field(default_factory=lambda: np.empty((0, 0), np.float32))
    alive: NDArray[np.bool_] = field(default_factory=lambda: np.empty(0, np.bool_))
    size: int = 0

    def append(self, ids: NDArray[np.int64], vectors: NDArray[np.float32]) -> None:
        need = self.size + len(ids)
        if need > len(self.ids):
            capacity = max(need, 2 * len(self.ids), 256)
            self.ids = _grow(self.ids, (capacity,))
            self.rows = _grow(self.rows, (capacity, self.dim))
            self.alive = _grow(self.alive, (capacity,))
        self.ids[self.size : need] = ids
        self.rows[self.size : need] = vectors
        self.alive[self.size : need] = True
        self.size = need

    def drop(self, ids: NDArray[np.int64]) -> None:
        live = self.ids[: self.size]
        at = np.searchsorted(live, ids)
        hit = at[(at < self.size) & (live[np.minimum(at, self.size - 1)] == ids)]
        self.alive[hit] = False
        self.rows[hit] = 0.0

    def view(self) -> tuple[NDArray[np.int64], NDArray[np.float32], NDArray[np.bool_]]:
        """The filled part; growth allocates new arrays, so a view stays valid unlocked."""
        return self.ids[: self.size], self.rows[: self.size], self.alive[: self.size]


def _grow(array: NDArray[G], shape: tuple[int, ...]) -> NDArray[G]:
    grown: NDArray[G] = np.zeros(shape, dtype=array.dtype)
    if array.size:
        grown[: len(array)] = array
    return grown


class VectorCache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._blocks: dict[str, _Block] = {}
        self._high = 0

    def sync(self, load_after: Loader) -> None:
        """Load vectors of every entry with a message id above the high-water mark."""
        with self._lock:
            rows = load_after(self._high)
            if not rows:
                return
            by_memory: dict[str, list[tuple[int, bytes]]] = {}
            for message_id, memory_id, blob in rows:
                by_memory.setdefault(memory_id, []).append((message_id, blob))
            for memory_id, items in by_memory.items():
                self._append(memory_id, items)
            self._high = max(self._high, rows[-1][0])

    def _append(self, memory_id: str, items: list[tuple[int, bytes]]) -> None:
        dim = len(items[0][1]) // 4
        block = self._blocks.setdefault(memory_id, _Block(dim))
        usable = [(i, b) for i, b in items if len(b) == 4 * block.dim]
        if not usable:
            return
        ids = np.fromiter((i for i, _ in usable), dtype=np.int64, count=len(usable))
        data = np.frombuffer(b"".join(b for _, b in usable), dtype=np.float32)
        block.append(ids, data.reshape(len(usable), block.dim))

    def drop(self, ids: Sequence[int]) -> None:
        wanted = np.sort(np.asarray(ids, dtype=np.int64))
        with self._lock:
            for block in self._blocks.values():
                block.drop(wanted)

    def scores(
        self, memory_ids: Iterable[str], query: NDArray[np.float32]
    ) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        """Cosine similarity of ``query`` with every live vector of the memories (same size)."""
        with self._lock:
            views = [
                block.view()
                for block in (self._blocks.get(m) for m in memory_ids)
                if block is not None and block.dim == query.shape[0]
            ]
        parts = [(ids[alive], (rows @ query)[alive]) for ids, rows, alive in views]
        if not parts:
            return np.empty(0, np.int64), np.empty(0, np.float32)
        ids = np.concatenate([p[0] for p in parts])
        sims = np.concatenate([p[1] for p in parts]).astype(np.float32, copy=False)
        return ids, sims

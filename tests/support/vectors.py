"""Seeded vectors for the SQLite vector cache's tests: clustered unit vectors (like sentence
embeddings of related texts), the row loader the cache syncs from, and a runner that builds
an index inline so it exists as soon as ``sync`` returns."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

DIM = 32
M = "memory-a"
Loader = Callable[[int], list[tuple[int, str, bytes]]]


def inline(job: Callable[[], None]) -> None:
    job()


def clustered(n: int, seed: int, centers: int = 40) -> NDArray[np.float32]:
    rng = np.random.default_rng(seed)
    middle = rng.normal(size=(centers, DIM))
    x = middle[rng.integers(0, centers, n)] + rng.normal(scale=0.35, size=(n, DIM))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def rows_of(vectors: NDArray[np.float32], first_id: int = 1, memory: str = M) -> Loader:
    data = [(first_id + i, memory, v.tobytes()) for i, v in enumerate(vectors)]
    return lambda high: [r for r in data if r[0] > high]

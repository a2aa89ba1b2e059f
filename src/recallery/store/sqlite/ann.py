"""An approximate nearest-neighbour index (usearch HNSW) over one memory's vector rows.

Keys are row positions in the memory's block (:mod:`recallery.store.sqlite.vectors`), so a
candidate's id, exact vector and liveness are one array lookup away: the index only proposes
candidates, the block's float32 rows score them. That is why int8 storage is enough (a quarter
of the memory of float32, and faster) without changing any score the store returns.

The index covers a prefix of the block's rows (``covered``); later rows are searched exactly
until a background job adds them. It may be snapshotted into the database file
(:mod:`.snapshots`), which drops it when any row of its memory is erased.

Growing usearch's capacity is not safe while a search runs, so searches share a lock that
inserts and removals take alone. usearch 2.26 holds the GIL while it searches, so a search
gains nothing from another thread (a 100k-row search of 8 ms beside 2.5 ms of Python on the
main thread took 10.7 ms). Inserts give the GIL up but take it back so often that a build
beside a thread busy in Python runs far slower (10,000 inserts on one thread: 1.6 s alone,
57 s beside; on two: 1.0 and 28 s), which is why a memory's first index is built in a child
process (:mod:`.annbuild`); the later, small extensions run here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from usearch.index import Index

Pending = Callable[[int], tuple[NDArray[np.int64], NDArray[np.float32], int]]
"""Given the covered prefix: live positions after it, their vectors, and the new end."""

#: Rows copied and inserted at a time while building (64k x 384 float32 = 100 MB).
BUILD_SLICE = 65_536
#: HNSW links per node ("M"); 32 bought no recall at the search effort below, only memory.
CONNECTIVITY = 16
#: Candidate list while inserting ("efConstruction"); it costs build time, not query time.
EXPANSION_ADD = 128
#: Candidate list while searching a million rows or more ("ef", at least the k asked for).
#: Dense clusters of near-duplicates need it wide: at 1M MiniLM-like rows ef 200 found 90% of
#: the exact top 10, ef 1024 98% (2.3 ms), ef 1536 99% (3.4 ms), ef 2048 no more
#: (benchmarks/scale/ann.py).
EXPANSION_SEARCH = 1536
#: The narrowest candidate list (see :func:`expansion`).
EXPANSION_LEAST = 768


def expansion(rows: int) -> int:
    """The candidate list for an index of ``rows``: :data:`EXPANSION_SEARCH` at a million
    rows, narrower below in proportion to ``(rows / 1M) ** 0.3``, never under
    :data:`EXPANSION_LEAST`. A smaller graph needs fewer candidates for the same recall:
    on benchmarks/scale/ann.py's rows, recall of the exact top 10 / 50 at ef 768 was 1.000 / 1.000
    at 20k and 0.995–1.000 at 100k (0.998–1.000 at ef 1536, which took 2–3x the time), and at
    1M 0.971 / 0.975 (1536: 0.983 / 0.988). The speed benchmark's whole search at 100k kept
    298 of 300 top-10 lists identical to an exact vector leg at ef 768 and 299 at ef 1536, in
    6.2–6.7 against 7.5–8.7 ms."""
    scaled = EXPANSION_SEARCH * (max(rows, 1) / 1_000_000) ** 0.3
    return int(min(EXPANSION_SEARCH, max(EXPANSION_LEAST, round(scaled))))


class SharedLock:
    """Many readers or one writer; a waiting writer stops new readers so it cannot starve."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0
        self._writing = False
        self._waiting = 0

    @contextmanager
    def read(self) -> Iterator[None]:
        with self._cond:
            self._cond.wait_for(lambda: not self._writing and not self._waiting)
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                if not self._readers:
                    self._cond.notify_all()

    @contextmanager
    def write(self) -> Iterator[None]:
        with self._cond:
            self._waiting += 1
            self._cond.wait_for(lambda: not self._writing and not self._readers)
            self._waiting -= 1
            self._writing = True
        try:
            yield
        finally:
            with self._cond:
                self._writing = False
                self._cond.notify_all()


class AnnIndex:
    """An HNSW index over rows ``[0, covered)`` of one block, keyed by row position."""

    def __init__(self, index: Index, covered: int, threads: int = 0) -> None:
        self._index = index
        self._threads = threads
        self._lock = SharedLock()
        self.covered = covered
        _set_expansion(self._index, self.expansion)
        #: The saved bytes a restored index searches in place, until it must change.
        self._viewed: NDArray[np.uint8] | None = None

    @classmethod
    def build(
        cls,
        rows: NDArray[np.float32],
        positions: NDArray[np.int64],
        covered: int,
        threads: int = 0,
    ) -> AnnIndex:
        """Index ``rows[positions]`` on ``threads`` threads (0: every core; 1 builds the same
        graph every time), a slice at a time so no second copy of the whole matrix is made.
        Nothing else sees the index before it is returned: no lock."""
        index = new_index(rows.shape[1])
        for start in range(0, len(positions), BUILD_SLICE):
            part = positions[start : start + BUILD_SLICE]
            index.add(part.astype(np.uint64), rows[part], threads=threads)
        return cls(index, covered, threads)

    @classmethod
    def restored(
        cls, graph: NDArray[np.uint8], dim: int, covered: int, threads: int = 0
    ) -> AnnIndex:
        """An index from the bytes of :meth:`saved`, searched in place (a third less memory
        than a loaded copy, and no time to load) until a row is added or removed."""
        index = new_index(dim)
        index.view(memoryview(graph.data))
        out = cls(index, covered, threads)
        out._viewed = graph
        return out

    @property
    def viewed(self) -> bool:
        """Whether it searches a snapshot's bytes in place (and cannot change)."""
        return self._viewed is not None

    def _mutable(self) -> None:
        """Before a change (under the write lock): a loaded copy of a viewed index."""
        if self._viewed is not None:
            index = new_index(self._index.ndim)
            index.load(memoryview(self._viewed.data))
            _set_expansion(index, self.expansion)
            self._index, self._viewed = index, None

    def saved(self) -> tuple[bytes, int]:
        """The index as bytes, and the rows it covers."""
        with self._lock.read():
            data = self._index.save()
            assert data is not None
            return data, self.covered

    def search(self, query: NDArray[np.float32], k: int) -> tuple[NDArray[np.int64], int]:
        """Positions of about the ``k`` nearest indexed rows, and how many rows were covered
        when they were found (rows from there on were not looked at)."""
        with self._lock.read():
            covered = self.covered
            found = self._index.search(query, k, threads=1)
        return np.asarray(found.keys, dtype=np.int64), covered

    def extend(self, pending: Pending) -> None:
        """Index the rows ``pending(covered)`` names. It runs under the write lock, so a row
        erased meanwhile is either not live for it or already covered when removed."""
        with self._lock.write():
            positions, vectors, end = pending(self.covered)
            if len(positions):
                self._mutable()
                self._index.add(positions.astype(np.uint64), vectors, threads=self._threads)
            self.covered = end
            _set_expansion(self._index, self.expansion)

    @property
    def expansion(self) -> int:
        """The candidates a search visits (:func:`expansion` of the rows covered)."""
        return expansion(self.covered)

    def remove(self, positions: NDArray[np.int64]) -> None:
        """Forget erased rows; positions not (yet) indexed are ignored. A viewed index keeps
        them (only in memory): every candidate's row is checked for life anyway, and a
        loaded copy would take a third more memory."""
        if self.viewed:
            return
        with self._lock.write():
            indexed = positions[positions < self.covered]
            if len(indexed):
                self._mutable()
                self._index.remove(indexed.astype(np.uint64))

    @property
    def memory_bytes(self) -> int:
        return int(self._index.memory_usage)


def _set_expansion(index: Index, candidates: int) -> None:
    """usearch's ``Index.expansion_search`` has a setter, which its typing hides."""
    index.expansion_search = candidates  # type: ignore[misc]


def new_index(dim: int, *, with_runtime: bool = True) -> Index:
    """An empty index of this module's settings. ``with_runtime``: load onnxruntime first;
    loading its native library while usearch inserts on another thread kills the process
    (SIGSEGV, usearch 2.26 with onnxruntime 1.32), and the local embedder loads it lazily, so
    a first query could arrive in the middle of a build (a build process needs none)."""
    if with_runtime:
        import onnxruntime  # noqa: F401
    from usearch.index import Index  # imported on first use: most memories never need it

    return Index(
        ndim=dim,
        metric="cos",
        dtype="i8",
        connectivity=CONNECTIVITY,
        expansion_add=EXPANSION_ADD,
        expansion_search=EXPANSION_SEARCH,
    )

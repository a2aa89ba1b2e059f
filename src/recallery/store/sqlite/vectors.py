"""An in-process copy of the stored vectors, one contiguous matrix per memory, searched exactly
with numpy or, past a size threshold, through an approximate index.

Vectors never change once written (a correction is a new entry with a new id), so the copy
can only be behind, never wrong: :meth:`VectorCache.sync` loads whatever was committed since
the last look, by this process or another. SQLite commits writers one at a time and message
ids only grow, so the committed ids always form a prefix and a high-water mark is enough.
Erasure drops rows at once; a row another process erased is never returned because the SQL
filter runs on every candidate.

A memory with at least ``ann_threshold`` live vectors also gets an HNSW index
(:mod:`recallery.store.sqlite.ann`), built (in a child process, :mod:`.annbuild`) and
extended by a background job so no search waits for it: until it covers a row, that row is
searched exactly. The index only proposes candidates; scores always come from the float32
rows, so both paths return the same numbers.
"""

from __future__ import annotations

import logging
import mmap
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial

import numpy as np
from numpy.typing import NDArray

from recallery.errors import StoreError
from recallery.store.sqlite.ann import AnnIndex
from recallery.store.sqlite.annbuild import build_apart
from recallery.store.sqlite.arrays import grown, located
from recallery.store.sqlite.catchup import Load, catch_up
from recallery.store.sqlite.ranking import Mask, best
from recallery.store.sqlite.snapshots import Arrays

log = logging.getLogger(__name__)

Loader = Load[tuple[int, str, bytes]]
"""(message_id, memory_id, float32 blob) of rows above the mark (see :mod:`.catchup`)."""
Rank = Callable[[NDArray[np.int64], NDArray[np.float32]], list[tuple[int, float]]]
"""The best (message_id, score) of these candidates that pass the search's filter, best first."""
Runner = Callable[[Callable[[], None]], None]
"""Runs an index-building job: in a background thread by default, inline in tests."""
Hits = list[tuple[int, float]]

#: Live vectors from which a memory gets an approximate index (chosen in benchmarks/scale/ann.py:
#: below it the exact product costs about as much as an HNSW search and needs no memory).
ANN_THRESHOLD = 20_000
#: Rows past a restored (viewed) index from which it is loaded into a copy that can grow;
#: until then they are searched exactly, as a memory under the threshold is.
VIEWED_TAIL = ANN_THRESHOLD
#: Bytes from which a block's first matrix gets its own mapping (see ``_matrix``).
BIG_MATRIX = 64 << 20
#: Rows added to a published index per exclusive hold, so a search waits at most that long.
#: Beside a thread busy in Python each insert waits for the GIL (see :mod:`.ann`): 512 rows
#: held the lock 1.4 s there (0.3 s alone), 32 rows 55 ms (20 ms alone).
EXTEND_CHUNK = 32
#: A filtered approximate search gives up for the exact path once it would ask the index for
#: more than this share of its rows: a selective filter then still finds every passing row, and
#: no wider search costs more than the scan (at 1M rows k = 12,800 took 80 ms, k = 102,400
#: 590 ms, the exact product 140 ms).
ANN_SHARE = 1 / 64


@dataclass
class _Block:
    """The vectors of one memory, in message-id order."""

    dim: int
    ids: NDArray[np.int64] = field(default_factory=lambda: np.empty(0, np.int64))
    rows: NDArray[np.float32] = field(default_factory=lambda: np.empty((0, 0), np.float32))
    alive: NDArray[np.bool_] = field(default_factory=lambda: np.empty(0, np.bool_))
    size: int = 0
    live: int = 0
    #: The approximate index once built; it covers a prefix of the rows.
    ann: AnnIndex | None = None
    #: Whether an index job for this block is queued or running (one at a time).
    building: bool = False

    def append(self, ids: NDArray[np.int64], vectors: NDArray[np.float32], room: int = 0) -> None:
        """Add rows; ``room``: rows expected in all, allocated with the block's first rows
        (not by doubling)."""
        need = self.size + len(ids)
        if not len(self.rows):
            self.rows = _matrix(max(need, room), self.dim)
        self.ids, self.rows = grown(self.ids, need), grown(self.rows, need)
        self.alive = grown(self.alive, need)
        self.ids[self.size : need] = ids
        self.rows[self.size : need] = vectors
        self.alive[self.size : need] = True
        self.size = need
        self.live += len(ids)

    def drop(self, ids: NDArray[np.int64]) -> NDArray[np.int64]:
        """Mark the rows of ``ids`` dead and zero them; returns the positions newly dropped."""
        hit = located(self.ids[: self.size], ids)[0]
        dropped = hit[self.alive[hit]]
        self.alive[dropped] = False
        self.rows[dropped] = 0.0
        self.live -= len(dropped)
        return dropped

    def view(self) -> tuple[NDArray[np.int64], NDArray[np.float32], NDArray[np.bool_]]:
        """The filled part; growth allocates new arrays, so a view stays valid unlocked."""
        return self.ids[: self.size], self.rows[: self.size], self.alive[: self.size]


def _matrix(rows: int, dim: int) -> NDArray[np.float32]:
    """Zeroed rows for a block's first load; a big one in its own anonymous mapping, on
    ordinary pages rather than the huge ones numpy asks for, whose first touch can wait on the
    kernel compacting memory (filling 1.5 GB here: 0.6 s, against 0.1-2.4 s with huge pages)."""
    private = getattr(mmap, "MAP_PRIVATE", 0) | getattr(mmap, "MAP_ANONYMOUS", 0)
    if rows * dim * 4 < BIG_MATRIX or not private:  # small, or no POSIX mmap
        return np.zeros((rows, dim), np.float32)
    mapping = mmap.mmap(-1, rows * dim * 4, flags=private)
    return np.frombuffer(mapping, np.float32).reshape(rows, dim)


def in_thread(job: Callable[[], None]) -> None:
    """The default :data:`Runner`: a daemon thread, so a long build never holds up exit."""
    threading.Thread(target=job, name="recallery-ann-index", daemon=True).start()


class VectorCache:
    """``ann_threshold``: live vectors from which a memory gets an approximate index (0 or
    less: never). ``run`` starts index jobs (tests pass one that runs them at once);
    ``threads`` builds them (0: every core; 1: the same graph every time, for tests);
    ``apart``: a memory's first index is built in a child process (:mod:`.annbuild`), in
    this one only should that fail."""

    def __init__(
        self,
        ann_threshold: int = ANN_THRESHOLD,
        run: Runner = in_thread,
        threads: int = 0,
        apart: bool = False,
    ) -> None:
        self._lock = threading.Lock()
        self._blocks: dict[str, _Block] = {}
        self._high = 0
        self._threshold = ann_threshold
        self._run = run
        self._threads = threads
        self._apart = apart
        self._room: dict[str, int] = {}
        self._graphs: dict[str, tuple[AnnIndex, NDArray[np.int64]]] = {}

    def emptied(self) -> VectorCache:
        """A new, empty cache with this one's settings."""
        return VectorCache(self._threshold, self._run, self._threads, self._apart)

    def expect(self, rows: dict[str, int]) -> None:
        """Rows each memory is expected to hold: its first load allocates that much at once."""
        with self._lock:
            self._room = dict(rows)

    def restore(self, states: dict[str, Arrays]) -> None:
        """Approximate indexes from snapshots; each is used once the rows it covers are
        loaded (same ids, nothing erased), else dropped."""
        for memory_id, a in states.items():
            covered = int(a["covered"][0])
            ann = AnnIndex.restored(a["graph"], int(a["dim"][0]), covered, self._threads)
            with self._lock:
                self._graphs[memory_id] = (ann, a["ids"].copy())

    def snapshot(self, memories: set[str]) -> Iterator[tuple[str, Arrays]]:
        """The approximate index of each of ``memories`` whose block lost no row."""
        with self._lock:
            held = [(m, b, b.ann) for m, b in self._blocks.items() if m in memories]
        for memory_id, block, ann in held:
            if ann is not None and block.live == block.size:
                graph, covered = ann.saved()
                yield memory_id, {"graph": np.frombuffer(graph, np.uint8),
                                  "ids": block.ids[:covered], "covered": np.asarray([covered]),
                                  "dim": np.asarray([block.dim])}  # fmt: skip

    def _attach(self) -> None:
        for memory_id, (ann, ids) in self._graphs.items():
            block = self._blocks.get(memory_id)
            if block is None or block.size < len(ids) or block.live < block.size:
                continue
            if np.array_equal(block.ids[: len(ids)], ids):
                block.ann = ann
        self._graphs.clear()

    def sync(self, load_after: Loader) -> None:
        """Load vectors of every entry with a message id above the high-water mark."""
        with self._lock:
            self._high, grown = catch_up(load_after, self._high, self._append)
            self._attach()
            if not grown:
                return
            due = [self._blocks[m] for m in grown if m in self._blocks]
            due = [b for b in due if self._wants_index(b)]
            for block in due:
                block.building = True
        for block in due:
            self._run(partial(self._index, block))

    def _append(self, memory_id: str, rows: list[tuple[int, str, bytes]]) -> None:
        dim = len(rows[0][2]) // 4
        block = self._blocks.setdefault(memory_id, _Block(dim))
        blobs, width = [r[2] for r in rows], 4 * block.dim
        if set(map(len, blobs)) != {width}:  # rows of another dimension: left out
            rows = [r for r in rows if len(r[2]) == width]
            blobs = [r[2] for r in rows]
        if not rows:
            return
        joined = b"".join(blobs)
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        data = np.frombuffer(joined, dtype=np.float32).reshape(len(rows), block.dim)
        block.append(ids, data, self._room.pop(memory_id, 0))

    def _wants_index(self, block: _Block) -> bool:
        behind = block.ann is None or block.ann.covered < block.size
        if block.ann is not None and block.ann.viewed:  # a restored index changes only once
            behind = block.size - block.ann.covered >= VIEWED_TAIL  # its tail costs that much
        return 0 < self._threshold <= block.live and behind and not block.building

    def _index(self, block: _Block) -> None:
        """The index job: build the block's index, then extend it until it covers every row."""
        try:
            while self._index_step(block):
                pass
        except BaseException:
            with self._lock:
                block.building = False
            raise

    def _index_step(self, block: _Block) -> bool:
        with self._lock:
            ann, size = block.ann, block.size
            if ann is not None and ann.covered >= size:
                block.building = False
                return False
            _, rows, alive = block.view()
        if ann is None:
            positions = np.flatnonzero(alive).astype(np.int64)
            built = self._build(rows, positions, size)
            # rows erased during the build are dead by now: forget them (an index built
            # apart is viewed and keeps them; every candidate's row is checked for life)
            with self._lock:
                _, _, alive = block.view()
                built.remove(np.flatnonzero(~alive[:size]).astype(np.int64))
                block.ann = built
        else:
            ann.extend(partial(self._pending, block))
        return True

    def _build(
        self, rows: NDArray[np.float32], positions: NDArray[np.int64], size: int
    ) -> AnnIndex:
        if self._apart:
            try:
                graph = build_apart(rows, positions, self._threads)
                return AnnIndex.restored(graph, rows.shape[1], size, self._threads)
            except StoreError as exc:
                log.warning("building the index here instead: %s", exc)
        return AnnIndex.build(rows, positions, size, self._threads)

    def _pending(
        self, block: _Block, covered: int
    ) -> tuple[NDArray[np.int64], NDArray[np.float32], int]:
        """The next live rows after ``covered`` for the index, read under the cache lock."""
        with self._lock:
            _, rows, alive = block.view()
            end = min(len(rows), covered + EXTEND_CHUNK)
            positions = covered + np.flatnonzero(alive[covered:end]).astype(np.int64)
            return positions, rows[positions], end

    def drop(self, ids: Sequence[int]) -> None:
        """Erase rows: dead at once for every search, then removed from any index (outside
        the cache lock, which an index extension takes while holding the index's own)."""
        wanted = np.sort(np.asarray(ids, dtype=np.int64))
        with self._lock:
            dropped = [(block.ann, block.drop(wanted)) for block in self._blocks.values()]
        for ann, positions in dropped:
            if ann is not None and len(positions):
                ann.remove(positions)

    def vectors(
        self, ids: Sequence[int], memory_ids: Iterable[str] | None = None
    ) -> dict[int, NDArray[np.float32]]:
        """Copies of the live vectors of those of ``ids`` held here (in ``memory_ids`` only,
        where given: a search looks in its own memories, not in every tenant's)."""
        out: dict[int, NDArray[np.float32]] = {}
        for _, found, rows in self._live(ids, memory_ids):
            out.update(zip(found.tolist(), rows, strict=True))
        return out

    def cosines(
        self, ids: Sequence[int], query: NDArray[np.float32], memory_ids: Iterable[str] | None
    ) -> dict[int, float]:
        """The cosine of ``query`` with the live vectors of those of ``ids`` held here (in
        ``memory_ids`` only, where given; 0 for a vector of another dimension), one matrix
        product per memory, as the vector leg scores its own candidates."""
        out: dict[int, float] = {}
        for dim, found, rows in self._live(ids, memory_ids):
            if dim != query.shape[0]:
                out.update(dict.fromkeys(found.tolist(), 0.0))
                continue
            sims = (rows @ query).astype(np.float32, copy=False)
            out.update(zip(found.tolist(), sims.tolist(), strict=True))
        return out

    def _live(
        self, ids: Sequence[int], memory_ids: Iterable[str] | None
    ) -> list[tuple[int, NDArray[np.int64], NDArray[np.float32]]]:
        """Per block held (in ``memory_ids`` only, where given): its dimension, the live ids
        among ``ids`` it holds, and copies of their rows."""
        wanted = np.unique(np.asarray(ids, dtype=np.int64))
        with self._lock:
            held = (
                self._blocks.values()
                if memory_ids is None
                else (b for b in (self._blocks.get(m) for m in memory_ids) if b is not None)
            )
            views = [(block.dim, block.view()) for block in held]
        out = []
        for dim, (known, rows, alive) in views:
            at, found = located(known, wanted)
            keep = alive[at]
            out.append((dim, found[keep], rows[at[keep]]))
        return out

    def indexed(self, memory_id: str) -> int | None:
        """How many rows of the memory its approximate index covers; None without one."""
        with self._lock:
            block = self._blocks.get(memory_id)
            return None if block is None or block.ann is None else block.ann.covered

    def search(
        self,
        memory_ids: Iterable[str],
        query: NDArray[np.float32],
        limit: int,
        rank: Rank,
        allowed: Mask | None = None,
    ) -> Hits:
        """The ``limit`` best (message_id, cosine) over the memories that ``rank`` lets pass,
        best first. Indexed memories are searched approximately, each on its own (``allowed``,
        the filter as a mask, first checks each candidate: only those that pass are scored);
        the rest, and rows an index does not cover yet, are ranked together exactly."""
        with self._lock:
            blocks = [
                (block, block.ann)
                for block in (self._blocks.get(m) for m in memory_ids)
                if block is not None and block.dim == query.shape[0]
            ]
        hits: Hits = []
        exact: list[tuple[NDArray[np.int64], NDArray[np.float32]]] = []
        for block, ann in blocks:
            start = 0
            if ann and (found := self._approximate(block, ann, query, limit, rank, allowed)):
                part, start = found
                hits += part
            exact.append(self._scores(block, query, start))
        ids = np.concatenate([p[0] for p in exact]) if exact else np.empty(0, np.int64)
        if len(ids):
            hits += rank(ids, np.concatenate([p[1] for p in exact]))
        return sorted(hits, key=lambda h: -h[1])[:limit]

    def _approximate(
        self, block: _Block, ann: AnnIndex, query: NDArray[np.float32], limit: int, rank: Rank,
        allowed: Mask | None,
    ) -> tuple[Hits, int] | None:  # fmt: skip
        """Index candidates scored exactly and ranked, widening eightfold until ``limit`` pass.
        Returns the hits and the rows covered, or None once the next widening would ask for
        :data:`ANN_SHARE` of the rows: a selective filter is cheaper and complete exactly."""
        # The index visits its expansion's worth of nodes whatever k is, so asking for that
        # many costs no more and leaves the filter enough candidates without a second search.
        k = max(4 * limit, 64, ann.expansion)
        while True:
            positions, covered = ann.search(query, k)
            with self._lock:
                ids, rows, alive = block.view()
            positions = positions[alive[positions]]
            if allowed is not None:
                positions = positions[allowed(ids[positions])]
            sims = (rows[positions] @ query).astype(np.float32, copy=False)
            hits = (rank if allowed is None else partial(best, limit=limit))(ids[positions], sims)
            if len(hits) >= limit:
                return hits, covered
            k *= 8
            if k > ANN_SHARE * covered:
                return None

    def _scores(
        self, block: _Block, query: NDArray[np.float32], start: int
    ) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        """Cosine of ``query`` with the block's live rows from ``start`` on (unit vectors)."""
        with self._lock:
            ids, rows, alive = block.view()
        ids, rows, alive = ids[start:], rows[start:], alive[start:]
        return ids[alive], (rows @ query)[alive].astype(np.float32, copy=False)

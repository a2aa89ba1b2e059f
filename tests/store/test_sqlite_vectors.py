"""The SQLite store's vector cache: exact search below ``ann_threshold``, an HNSW index past it.

Index jobs run inline here (``run=inline``), so the index exists as soon as ``sync`` returns.
Data are seeded, clustered unit vectors, like sentence embeddings of related texts.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from tests.support.vectors import M, clustered, inline, rows_of

from recallery.settings import Settings
from recallery.store import open_store
from recallery.store.sqlite import SQLiteStore, ann, vectors
from recallery.store.sqlite.ann import AnnIndex
from recallery.store.sqlite.ranking import best_passing
from recallery.store.sqlite.vectors import ANN_THRESHOLD, Hits, VectorCache
from recallery.testing.conformance import StoreConformance


class Ranker:
    """``best_passing`` over a set filter; records how many candidates each call was given."""

    def __init__(self, limit: int, allowed: set[int] | None = None) -> None:
        self.limit, self.allowed, self.seen = limit, allowed, [0]

    def __call__(self, ids: NDArray[np.int64], sims: NDArray[np.float32]) -> Hits:
        self.seen.append(len(ids))
        return best_passing(ids, sims, self.limit, self.passing)

    def passing(self, candidates: Iterable[int]) -> set[int]:
        ids = {int(i) for i in candidates}
        return ids if self.allowed is None else ids & self.allowed


def exact_top(
    vectors: NDArray[np.float32],
    query: NDArray[np.float32],
    k: int,
    allowed: set[int] | None = None,
) -> list[int]:
    """Ids (1-based) of the ``k`` best rows by cosine among ``allowed``."""
    order = np.argsort(-(vectors @ query), kind="stable") + 1
    return [int(i) for i in order if allowed is None or int(i) in allowed][:k]


@pytest.fixture
def data() -> NDArray[np.float32]:
    return clustered(3000, seed=1)


@pytest.fixture
def indexed(data: NDArray[np.float32]) -> VectorCache:
    cache = VectorCache(ann_threshold=500, run=inline, threads=1)
    cache.sync(rows_of(data))
    assert cache.indexed(M) == len(data)
    return cache


def test_ann_results_match_the_exact_ones(indexed: VectorCache, data: NDArray[np.float32]) -> None:
    queries = clustered(30, seed=2)
    overlap = []
    for q in queries:
        rank = Ranker(10)
        hits = indexed.search([M], q, 10, rank)
        assert max(rank.seen) < len(data)  # the index proposed the candidates, not a full scan
        ids = [i for i, _ in hits]
        overlap.append(len(set(ids) & set(exact_top(data, q, 10))) / 10)
        # scores are the float32 cosines, whichever path found the row
        assert [s for _, s in hits] == pytest.approx([float(data[i - 1] @ q) for i in ids])
        assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    assert np.mean(overlap) >= 0.95


def test_a_selective_filter_falls_back_to_exact_and_loses_no_row(
    indexed: VectorCache, data: NDArray[np.float32]
) -> None:
    q = clustered(1, seed=3)[0]
    worst = exact_top(data, q, len(data))[-40:]  # far from the query: the index never offers them
    allowed = set(worst[::2])
    rank = Ranker(10, allowed)
    hits = indexed.search([M], q, 10, rank)
    assert [i for i, _ in hits] == exact_top(data, q, 10, allowed)
    assert rank.seen[-1] == len(data)  # the last ranking was the exact one over every row
    few = set(worst[:3])
    assert {i for i, _ in indexed.search([M], q, 10, Ranker(10, few))} == few


def test_a_filter_that_rejects_the_best_candidates_widens_the_index_search(
    monkeypatch: pytest.MonkeyPatch, indexed: VectorCache, data: NDArray[np.float32]
) -> None:
    monkeypatch.setattr(vectors, "ANN_SHARE", 0.5)  # room to widen in a small index
    monkeypatch.setattr(ann, "EXPANSION_SEARCH", 0)  # first look: 4 x limit, not ef
    monkeypatch.setattr(ann, "EXPANSION_LEAST", 0)
    q = clustered(1, seed=8)[0]
    allowed = set(exact_top(data, q, len(data))[100:])  # the best 100 rows fail the filter
    rank = Ranker(10, allowed)
    hits = indexed.search([M], q, 10, rank)
    assert rank.seen[1:] == [64, 512]  # a second, wider look at the index; no exact scan
    assert len({i for i, _ in hits} & set(exact_top(data, q, 10, allowed))) >= 9


@pytest.mark.parametrize("share", [1.0, 0.5, 0.25, 0.05, 0.01])
def test_a_filter_asked_of_every_candidate_first_ranks_as_the_check_after(
    indexed: VectorCache, data: NDArray[np.float32], share: float
) -> None:
    """With the filter as a mask, the index's candidates are filtered before any is scored;
    the hits are exactly those of the check that runs on the best scored ones (ties, the
    widening and the fall-back to the exact path included)."""
    rng = np.random.default_rng(int(share * 100))
    tie = data.copy()
    tie[7] = tie[6]  # two rows of equal score: the newer first either way
    cache = VectorCache(ann_threshold=500, run=inline, threads=1)
    cache.sync(rows_of(tie))
    for q in [*clustered(12, seed=9), tie[6]]:
        allowed = {i for i in range(1, len(tie) + 1) if rng.random() < share}
        mask = partial(np.isin, test_elements=np.fromiter(allowed, np.int64))
        checked = cache.search([M], q, 10, Ranker(10, allowed))
        masked = cache.search([M], q, 10, Ranker(10, allowed), mask)
        # a matrix product of other rows may round a score's last bit otherwise
        assert [i for i, _ in masked] == [i for i, _ in checked]
        assert [s for _, s in masked] == pytest.approx([s for _, s in checked], rel=1e-6)
        assert {i for i, _ in masked} <= allowed


def test_erased_rows_leave_the_index(indexed: VectorCache, data: NDArray[np.float32]) -> None:
    q = data[41]
    assert indexed.search([M], q, 1, Ranker(1))[0][0] == 42
    indexed.drop([42])
    hits = indexed.search([M], q, 10, Ranker(10))
    assert 42 not in {i for i, _ in hits}
    assert [i for i, _ in hits] == [i for i in exact_top(data, q, 11) if i != 42]
    ann = indexed._blocks[M].ann
    assert ann is not None and 41 not in ann.search(q, 64)[0].tolist()


def test_rows_erased_while_the_index_builds_are_left_out_of_it(
    monkeypatch: pytest.MonkeyPatch, data: NDArray[np.float32]
) -> None:
    cache = VectorCache(ann_threshold=500, run=inline, threads=1)
    build = AnnIndex.build

    def build_then_erase(*args: Any) -> AnnIndex:
        built = build(*args)
        cache.drop([42])  # erased after the build read the rows, before it was published
        return built

    monkeypatch.setattr(AnnIndex, "build", build_then_erase)
    cache.sync(rows_of(data))
    ann = cache._blocks[M].ann
    assert ann is not None and 41 not in ann.search(data[41], 64)[0].tolist()


def test_rows_added_after_the_build_are_found(
    indexed: VectorCache, data: NDArray[np.float32]
) -> None:
    later = clustered(700, seed=4)
    indexed.sync(rows_of(later, first_id=len(data) + 1))
    assert indexed.indexed(M) == len(data) + len(later)
    for row, q in enumerate(later[:20]):
        assert indexed.search([M], q, 1, Ranker(1))[0][0] == len(data) + 1 + row


def test_rows_the_index_does_not_cover_yet_are_searched_exactly(
    data: NDArray[np.float32],
) -> None:
    jobs: list[Callable[[], None]] = []
    cache = VectorCache(ann_threshold=500, run=jobs.append)
    cache.sync(rows_of(data[:2000]))
    assert cache.indexed(M) is None
    jobs.pop()()
    cache.sync(rows_of(data))  # rows 2001..3000 arrive; the job that indexes them waits
    assert cache.indexed(M) == 2000 and len(jobs) == 1
    for row, q in enumerate(data[2000:2020]):
        rank = Ranker(10)
        hits = cache.search([M], q, 10, rank)
        assert hits[0][0] == 2001 + row
        assert 1000 in rank.seen  # the uncovered rows, ranked exactly
    jobs.pop()()
    assert cache.indexed(M) == 3000


def test_a_memory_under_the_threshold_stays_exact(data: NDArray[np.float32]) -> None:
    cache = VectorCache(ann_threshold=len(data) + 1, run=inline, threads=1)
    cache.sync(rows_of(data))
    assert cache.indexed(M) is None
    q = clustered(1, seed=5)[0]
    rank = Ranker(10)
    hits = cache.search([M], q, 10, rank)
    assert rank.seen[1] == len(data)  # one exact ranking over every row
    assert [i for i, _ in hits] == exact_top(data, q, 10)
    never = VectorCache(ann_threshold=0, run=inline, threads=1)
    never.sync(rows_of(data))
    assert never.indexed(M) is None


def test_scopes_merge_indexed_and_exact_memories(data: NDArray[np.float32]) -> None:
    small = clustered(300, seed=6)
    cache = VectorCache(ann_threshold=1000, run=inline, threads=1)
    first, second = rows_of(data), rows_of(small, first_id=len(data) + 1, memory="memory-b")
    cache.sync(lambda high: first(high) + second(high))
    assert cache.indexed(M) == len(data) and cache.indexed("memory-b") is None
    both = np.concatenate([data, small])
    for q in clustered(10, seed=7):
        hits = cache.search([M, "memory-b"], q, 10, Ranker(10))
        top = exact_top(both, q, 10)
        assert len({i for i, _ in hits} & set(top)) >= 9
        assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)


def test_searches_stay_correct_while_rows_arrive_and_leave(data: NDArray[np.float32]) -> None:
    workers: list[threading.Thread] = []

    def in_thread(job: Callable[[], None]) -> None:
        workers.append(threading.Thread(target=job))
        workers[-1].start()

    cache = VectorCache(ann_threshold=500, run=in_thread)
    cache.sync(rows_of(data[:600]))
    erased: set[int] = set()
    failures: list[str] = []

    def searcher(seed: int) -> None:
        for q in clustered(80, seed=seed):
            gone = set(erased)
            hits = cache.search([M], q, 10, Ranker(10))
            if len(hits) != 10 or {i for i, _ in hits} & gone:
                failures.append(f"{hits} after erasing {sorted(gone)}")

    searchers = [threading.Thread(target=searcher, args=(s,)) for s in (10, 11)]
    for t in searchers:
        t.start()
    for end in range(800, 3001, 200):
        cache.sync(rows_of(data[:end]))
        doomed = [i for i in range(end - 300, end, 13) if i not in erased]
        cache.drop(doomed)
        erased.update(doomed)
    for t in searchers + workers:
        t.join()
    assert not failures
    assert cache.indexed(M) == len(data)
    for q in data[:50]:
        assert not {i for i, _ in cache.search([M], q, 10, Ranker(10))} & erased


class TestSQLiteConformanceWithIndex(StoreConformance):
    """The whole store suite again, with every memory searched through an HNSW index."""

    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[SQLiteStore]:
        s = SQLiteStore(tmp_path / "conformance.db", ann_threshold=1)
        s._indexes.vectors = VectorCache(ann_threshold=1, run=inline, threads=1)
        yield s
        s.close()


def test_the_threshold_is_a_setting(tmp_path: Path) -> None:
    assert Settings().ann_threshold == ANN_THRESHOLD
    settings = Settings.from_env({"RECALLERY_ANN_THRESHOLD": "1234"}, data_dir=tmp_path)
    assert settings.ann_threshold == 1234
    store = open_store(settings)
    try:
        assert isinstance(store, SQLiteStore) and store._indexes.vectors._threshold == 1234
    finally:
        store.close()


def test_a_loader_that_returns_rows_a_part_at_a_time_is_drained() -> None:
    data = clustered(10, seed=4)
    every = rows_of(data)
    marks: list[int] = []

    def three_at_a_time(high: int) -> list[tuple[int, str, bytes]]:
        marks.append(high)
        return every(high)[:3]

    cache = VectorCache(ann_threshold=0)
    cache.sync(three_at_a_time)
    assert marks == [0, 3, 6, 9, 10]
    assert sorted(cache.vectors(range(1, 12))) == list(range(1, 11))


def test_rows_of_other_dimensions_are_left_out_even_when_their_bytes_add_up() -> None:
    """A chunk of rows of 16, 48 and 32 dimensions holds as many bytes as three of 32: only
    the row of the memory's dimension is kept, with its own vector."""
    cache = VectorCache(ann_threshold=0, run=inline)
    v, w = clustered(2, seed=4)
    first = [(1, M, v.tobytes())]
    rest = [
        (2, M, w[:16].tobytes()),
        (3, M, np.concatenate([w, w[:16]]).tobytes()),
        (4, M, v.tobytes()),
    ]
    cache.sync(lambda high: [r for r in first if r[0] > high])
    cache.sync(lambda high: [r for r in first + rest if r[0] > high])
    hits = cache.search([M], v, 10, Ranker(10))
    assert {i for i, _ in hits} == {1, 4}
    assert [s for _, s in hits] == pytest.approx([1.0, 1.0], abs=1e-5)


def test_vectors_asked_within_memories_come_from_those_only() -> None:
    """A search reads its candidates' vectors from its own memories' blocks: other tenants'
    blocks are not looked through (they were, one binary search each, for every search)."""
    cache = VectorCache(ann_threshold=0)
    a, b = clustered(5, seed=9), clustered(5, seed=10)
    cache.sync(lambda high: [] if high else [*rows_of(a)(0), *rows_of(b, 6, "memory-b")(0)])
    everything = cache.vectors(list(range(1, 11)))
    assert sorted(everything) == list(range(1, 11))
    assert sorted(cache.vectors(list(range(1, 11)), [M])) == [1, 2, 3, 4, 5]
    assert sorted(cache.vectors(list(range(1, 11)), ["memory-b", "none"])) == [6, 7, 8, 9, 10]
    assert np.array_equal(cache.vectors([7], ["memory-b"])[7], b[1])


def test_the_candidates_a_search_visits_follow_the_index_size(data: NDArray[np.float32]) -> None:
    sizes = [1, 1_000, 20_000, 100_000, 300_000, 1_000_000, 3_000_000]
    visited = [ann.expansion(n) for n in sizes]
    assert visited == sorted(visited)
    assert visited[0] == visited[2] == ann.EXPANSION_LEAST
    assert visited[3] < 800 < visited[4] < ann.EXPANSION_SEARCH
    assert visited[-2] == visited[-1] == ann.EXPANSION_SEARCH
    index = AnnIndex.build(data, np.arange(len(data)), len(data), threads=1)
    assert index.expansion == ann.EXPANSION_LEAST
    index.extend(lambda covered: (np.arange(covered, covered), data[:0], 2_000_000))
    assert index.expansion == ann.EXPANSION_SEARCH  # follows the rows it covers


def test_candidate_cosines_are_the_rows_own_within_the_memories_asked() -> None:
    """The cosines of a search's candidates, one matrix product per memory, are each live
    row's own float32 dot product with the query (to float32 rounding: BLAS sums a few rows
    at a time in another order than one row's dot product): erased rows and rows of memories
    not asked are left out, and a memory of another dimension gives 0."""
    cache = VectorCache(ann_threshold=0)
    a, b = clustered(40, seed=11), clustered(10, seed=12)
    other = np.ones((3, 16), np.float32) / 4.0  # a memory of another model's dimension
    rows = [
        *rows_of(a)(0),
        *rows_of(b, 41, "memory-b")(0),
        *[(51 + i, "memory-c", v.tobytes()) for i, v in enumerate(other)],
    ]
    cache.sync(lambda high: [r for r in rows if r[0] > high])
    cache.drop([3, 7])
    q = clustered(1, seed=13)[0]
    asked = [40, 1, 3, 7, 12, 41, 45, 51, 99, 12]
    got = cache.cosines(asked, q, [M, "memory-c"])
    want = {i: float(a[i - 1] @ q) for i in (1, 12, 40)} | {51: 0.0}
    assert got == pytest.approx(want, abs=1e-6) and got.keys() == want.keys()
    theirs = {i: float(b[i - 41] @ q) for i in (41, 45)}
    assert cache.cosines(asked, q, ["memory-b"]) == pytest.approx(theirs, abs=1e-6)
    assert cache.cosines(asked, q, None) == pytest.approx(want | theirs, abs=1e-6)  # every memory

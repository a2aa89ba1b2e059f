"""A memory's first HNSW index built in a child process (:mod:`recallery.store.sqlite.annbuild`):
the very index a build in this process makes, searched alike; a child that fails is an error
the cache answers by building here, never a hang or a missing index."""

from __future__ import annotations

import logging
from collections.abc import Iterable

import numpy as np
import pytest
from numpy.typing import NDArray
from tests.support.vectors import M, clustered, inline, rows_of

from recallery.errors import StoreError
from recallery.store.sqlite import annbuild, vectors
from recallery.store.sqlite.ann import AnnIndex
from recallery.store.sqlite.ranking import best_passing
from recallery.store.sqlite.vectors import Hits, VectorCache


def everyone(ids: Iterable[int]) -> set[int]:
    return set(ids)


def top(cache: VectorCache, query: NDArray[np.float32], limit: int = 10) -> Hits:
    return cache.search([M], query, limit, lambda i, s: best_passing(i, s, limit, everyone))


def test_an_index_built_apart_is_the_one_built_here() -> None:
    rows = clustered(3000, seed=4)
    positions = np.arange(0, len(rows), 2, dtype=np.int64)  # every other row, keyed by position
    here = AnnIndex.build(rows, positions, len(rows), threads=1).saved()[0]
    apart = annbuild.build_apart(rows, positions, threads=1)
    assert apart.tobytes() == here


def test_a_cache_building_apart_answers_as_one_building_here() -> None:
    data, queries = clustered(3000, seed=1), clustered(20, seed=2)
    here = VectorCache(ann_threshold=500, run=inline, threads=1)
    apart = VectorCache(ann_threshold=500, run=inline, threads=1, apart=True)
    for cache in (here, apart):
        cache.sync(rows_of(data))
        assert cache.indexed(M) == len(data)
    assert [top(apart, q) for q in queries] == [top(here, q) for q in queries]


def test_a_build_process_that_fails_is_an_error_not_a_hang(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(annbuild.sys, "executable", "/bin/false")  # exits at once, reads nothing
    rows = clustered(2000, seed=5)
    with pytest.raises(StoreError, match="index build process"):
        annbuild.build_apart(rows, np.arange(len(rows), dtype=np.int64))


def test_the_cache_builds_here_when_the_build_process_fails(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*_: object) -> NDArray[np.uint8]:
        raise StoreError("the index build process exited with 1")

    monkeypatch.setattr(vectors, "build_apart", broken)
    data = clustered(1500, seed=6)
    cache = VectorCache(ann_threshold=500, run=inline, threads=1, apart=True)
    with caplog.at_level(logging.WARNING, logger=vectors.__name__):
        cache.sync(rows_of(data))
    assert cache.indexed(M) == len(data)
    assert "building the index here instead" in caplog.text
    best = top(cache, data[7])
    assert best[0][0] == 8  # the row itself (ids are 1-based)

"""Snapshots of the SQLite store's in-process indexes (kept inside the database file): a store
reopened from them answers every search leg exactly as a store rebuilt from the rows, also
after writes, changes and erasures by another process in between; and erasing an entry leaves
neither its text nor its vector in any file the store wrote."""

from __future__ import annotations

import mmap
import sqlite3
from collections.abc import Callable
from contextlib import closing
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from recallery import Engine, SearchRequest, TurnInput
from recallery.models import EntryType, Memory, Scope
from recallery.providers.registry import ModelRegistry
from recallery.store import sqlite as sqlite_module
from recallery.store.filters import EntryFilter
from recallery.store.sqlite import SQLiteStore
from recallery.store.sqlite import indexes as indexes_module
from recallery.store.sqlite import snapshots as snapshots_module
from recallery.store.sqlite import vectors as vectors_module
from recallery.store.sqlite.indexes import prune_changes
from recallery.store.sqlite.vectors import VectorCache
from recallery.testing.bm25 import corpus
from recallery.testing.conformance import DIM, T0, StoreConformance, make_memory
from recallery.testing.fakes import DeterministicEmbedder, FrozenClock

SECRET = "zanzibarquokka"


def inline(job: Callable[[], None]) -> None:
    job()


def opened(path: Path, ann_threshold: int = 30) -> SQLiteStore:
    """A store whose HNSW indexes are built at once, the same graph every time."""
    store = SQLiteStore(path, snapshot_rows=0)
    store._indexes.vectors = VectorCache(ann_threshold, run=inline, threads=1)
    return store


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "snapshots.db"


def vectors(n: int, seed: int) -> list[Any]:
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(n, DIM)).astype(np.float32)
    return list(v / np.linalg.norm(v, axis=1, keepdims=True))


def seed(store: SQLiteStore, memory: Memory, n: int, seed_: int) -> list[int]:
    """Raw turns of a few conversations and some extracted entries, varied users and times."""
    rng = np.random.default_rng(seed_)
    rows = [
        (text, vector, {
            "message_type": EntryType.RAW if i % 4 else EntryType.SEMANTIC,
            "user_id": ["u1", "u2"][int(rng.integers(2))],
            "session_id": ["s1", "s2", ""][int(rng.integers(3))],
            "valid_at": T0 + timedelta(hours=int(rng.integers(0, 5))),
        })
        for i, (text, vector) in enumerate(zip(corpus(n, seed_), vectors(n, seed_), strict=True))
    ]  # fmt: skip
    ids: list[int] = StoreConformance().seed(store, memory, rows)
    return ids


QUERIES = ["hiking", "Paris marathon", "teachers teaching piano", "river dog", "the cafe"]
FILTERS = [EntryFilter(), EntryFilter(user_id="u1", enabled_only=True)]


def answers(store: SQLiteStore, memories: list[str], ids: list[int]) -> list[Any]:
    """Every search leg over each memory and all together, for every query and filter."""
    out: list[Any] = []
    probes = vectors(3, 99)
    with store.read() as r:
        for scope in [*(Scope.of(m) for m in memories), Scope(frozenset(memories))]:
            for f in FILTERS:
                for q in QUERIES:
                    out.append(r.keyword_candidates(scope, q, f, 10))
                    out.append(r.window_candidates(scope, q, f, 10))
                for v in probes:
                    out.append(r.vector_candidates(scope, v, f, 10))
                out.append(r.neighbours(scope, ids, f, 2))
                out.append(sorted(r.lengths(scope, ids).items()))
                out.append(sorted(r.passing(scope, f, ids)))
    return out


def answers_at(path: Path, memories: list[str], ids: list[int]) -> list[Any]:
    """:func:`answers` of a store opened on ``path`` for them, then closed."""
    store = opened(path)
    try:
        return answers(store, memories, ids)
    finally:
        store.close()


def rebuilt_copy(path: Path) -> Path:
    """A copy of the file without its snapshots: a store opened on it rebuilds from rows."""
    copy = path.with_name("rebuilt-" + path.name)
    for stale in copy.parent.glob(copy.name + "*"):
        stale.unlink()
    with closing(sqlite3.connect(path)) as src, closing(sqlite3.connect(copy)) as dst:
        src.backup(dst)
        dst.execute("DELETE FROM index_snapshots")
        dst.commit()
    return copy


def one_memory_snapshotted(path: Path, n: int) -> tuple[Memory, list[int]]:
    """A memory of ``n`` rows, searched once (every index loaded), then snapshotted."""
    store = opened(path)
    memory = make_memory()
    ids = seed(store, memory, n, 1)
    answers(store, [memory.id], ids)
    store.save_indexes()
    store.close()
    return memory, ids


def assert_answers_as_rebuilt(path: Path, memories: list[str], ids: list[int]) -> SQLiteStore:
    """A store reopened on ``path`` answers as one rebuilt from the rows; returns it, open."""
    restored = opened(path)
    got = answers(restored, memories, ids)
    rebuilt = opened(rebuilt_copy(path))
    try:
        assert got == answers(rebuilt, memories, ids)
    finally:
        rebuilt.close()
    return restored


def snapshotted(path: Path) -> dict[str, set[str]]:
    """Kinds of snapshot stored per memory."""
    with closing(sqlite3.connect(path)) as conn:
        rows = conn.execute("SELECT DISTINCT memory_id, kind FROM index_snapshots").fetchall()
    out: dict[str, set[str]] = {}
    for memory_id, kind in rows:
        out.setdefault(memory_id, set()).add(kind)
    return out


ALL = {"keywords", "columns", "conversations", "ann"}


def test_a_store_reopened_from_its_snapshot_answers_as_a_rebuild(path: Path) -> None:
    store = opened(path)
    a, b = make_memory(), make_memory()
    ids = seed(store, a, 80, 1) + seed(store, b, 50, 2)
    before = answers(store, [a.id, b.id], ids)
    assert store.save_indexes() > 0
    store.close()
    assert snapshotted(path) == {a.id: ALL, b.id: ALL}
    restored = assert_answers_as_rebuilt(path, [a.id, b.id], ids)
    try:
        assert answers(restored, [a.id, b.id], ids) == before
        # it started from the snapshot: no row read again, both HNSW graphs restored
        assert restored._indexes.rows_loaded == 0
        assert restored._indexes.graphs_stored == {a.id, b.id}
        assert restored.vectors_indexed(a.id) == 80
    finally:
        restored.close()


def test_a_snapshot_of_an_older_format_is_rebuilt_from_rows(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Snapshots written before conversations held lengths (format 1) are not read: the next
    process loads every row once, answers as a rebuild, lengths included."""
    store = opened(path)
    a = make_memory()
    ids = seed(store, a, 60, 1)
    answers(store, [a.id], ids)
    with monkeypatch.context() as m:
        older = {kind: n - 1 for kind, n in snapshots_module.FORMATS.items()}
        m.setattr(snapshots_module, "FORMATS", older)
        assert store.save_indexes() > 0
    store.close()
    restored = assert_answers_as_rebuilt(path, [a.id], ids)
    try:
        assert restored._indexes.rows_loaded == 60
        with restored.read() as r:
            assert len(r.lengths(Scope.of(a.id), ids)) == 45  # its raw turns: 3 in 4
    finally:
        restored.close()


def test_keywords_of_an_older_format_are_made_again_and_the_hnsw_graphs_kept(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keyword format 4 stems Arabic lightly: a store whose keyword snapshots are format 3
    loads its rows once more (an Arabic word is then found without its article), and keeps
    its HNSW graphs, whose format did not change."""
    store = opened(path)
    a = make_memory()
    arabic = ["أعزف على الكمان كل عطلة نهاية أسبوع", "طعامي المفضل هو الفطائر"]
    ids = seed(store, a, 60, 1)
    ids += StoreConformance().seed(
        store, a, [(t, v, {}) for t, v in zip(arabic, vectors(2, 9), strict=True)]
    )
    with monkeypatch.context() as m:
        m.setattr(snapshots_module, "FORMATS", {**snapshots_module.FORMATS, "keywords": 3})
        assert store.save_indexes() > 0
    store.close()
    restored = opened(path)
    try:
        with restored.read() as r:
            found = [i for i, _ in r.keyword_candidates(Scope.of(a.id), "كمان", EntryFilter(), 5)]
        assert found == [ids[-2]]
        assert restored._indexes.rows_loaded == 62
        assert restored._indexes.graphs_stored == {a.id}
    finally:
        restored.close()


def test_writes_changes_and_erasures_by_another_process_after_the_snapshot(path: Path) -> None:
    """Another process adds rows, changes states and erases after the snapshot: the erased
    row's memory loses its snapshot in that transaction, and a reopened store answers as a
    rebuild: the snapshot's memory caught up through the change log, the other from rows."""
    here = opened(path)
    a, b = make_memory(), make_memory()
    ids = seed(here, a, 80, 1) + seed(here, b, 50, 2)
    answers(here, [a.id, b.id], ids)
    here.save_indexes()
    there = opened(path)
    c = make_memory()  # created after the snapshot
    try:
        ids += seed(there, a, 20, 3) + seed(there, b, 5, 4) + seed(there, c, 12, 6)
        with there.write() as w:
            w.insert_memory(make_memory())  # and one that stays empty
            w.update_entries(ids[3:9], {"status": 0})
            w.update_entries(ids[85:90], {"retired_at": T0 + timedelta(hours=2)})
            w.update_entries(ids[100:104], {"forget_at": T0 + timedelta(hours=1)})
            w.delete_entries(b.id, ids[90:93])
    finally:
        there.close()
    assert snapshotted(path) == {a.id: ALL}
    every = [a.id, b.id, c.id]
    restored = assert_answers_as_rebuilt(path, every, ids)
    try:
        assert answers(here, every, ids) == answers(restored, every, ids)
        # b from its rows, the rows of a and c written since
        assert restored._indexes.rows_loaded == 50 + 20 + 5 - 3 + 12
        restored.save_indexes()
    finally:
        restored.close()
        here.close()
    assert snapshotted(path) == {a.id: ALL, b.id: ALL, c.id: ALL - {"ann"}}  # c: 12 rows
    assert_answers_as_rebuilt(path, every, ids).close()


def test_a_memory_that_lost_rows_in_this_process_is_snapshotted_without_them(
    path: Path,
) -> None:
    """Its erased rows are still in this process's postings and HNSW graph: the snapshot
    leaves them out (the graph, which keeps what it removed, altogether)."""
    store = opened(path)
    a, b = make_memory(), make_memory()
    ids = seed(store, a, 40, 1) + seed(store, b, 40, 2)
    answers(store, [a.id, b.id], ids)
    with store.write() as w:
        w.delete_entries(a.id, ids[:3] + ids[20:22])
    store.save_indexes()
    assert snapshotted(path) == {a.id: ALL - {"ann"}, b.id: ALL}
    store.close()
    restored = assert_answers_as_rebuilt(path, [a.id, b.id], ids)
    try:
        assert restored._indexes.rows_loaded == 0
    finally:
        restored.close()


def test_closing_snapshots_once_enough_rows_were_read(path: Path) -> None:
    store = SQLiteStore(path, snapshot_rows=30)
    a = make_memory()
    seed(store, a, 20, 1)
    store.warm()
    store.close()
    assert snapshotted(path) == {}  # 20 rows: not worth it
    store = SQLiteStore(path, snapshot_rows=30)
    seed(store, a, 20, 2)
    store.warm()
    store.close()
    assert snapshotted(path) == {a.id: ALL - {"ann"}}  # 40 rows read, under the HNSW threshold


def test_erasure_leaves_no_trace_in_any_file_the_store_wrote(path: Path) -> None:
    """The snapshot holds the entry's word (a keyword stem) and its vector (int8, in the HNSW
    graph); erasing it drops the snapshot in the same transaction, secure_delete zeroes the
    pages, and the scrub truncates the WAL; a snapshot written afterwards by the process that
    still holds them in memory leaves them out: neither is in any file of the folder."""
    store = opened(path)
    memory = make_memory()
    ids = seed(store, memory, 40, 1)
    secret = vectors(1, 7)[0]
    (gone,) = StoreConformance().seed(store, memory, [(f"my PIN is {SECRET}", secret, {})])
    store.warm()
    block = store._indexes.vectors._blocks[memory.id]
    assert block.ann is not None
    quantized = block.ann._index.get(len(ids), dtype=np.int8).tobytes()
    traces = [SECRET.encode(), secret.tobytes(), quantized]
    store.save_indexes()
    with sqlite3.connect(path) as conn:  # the snapshot itself holds the word and the vector
        stored = b"".join(bytes(r[0]) for r in conn.execute("SELECT data FROM index_snapshots"))
    assert SECRET.encode() in stored and quantized in stored
    with store.write() as w:
        w.delete_entries(memory.id, [gone])
    store.scrub()
    assert snapshotted(path) == {}
    store.save_indexes()  # this process still holds the word and the vector, in memory
    assert snapshotted(path) == {memory.id: ALL - {"ann"}}
    store.close()
    files = [p for p in path.parent.rglob("*") if p.is_file()]
    assert path in files
    for file in files:
        data = file.read_bytes()
        for trace in traces:
            assert trace not in data, (file.name, trace)


def test_a_restored_store_that_erases_and_writes_answers_as_a_rebuild(path: Path) -> None:
    """Its HNSW graph, searched in place in the snapshot's bytes, keeps the erased rows (their
    candidates are dead) and leaves new rows to the exact search."""
    a, ids = one_memory_snapshotted(path, 80)
    restored = opened(path)
    try:
        answers(restored, [a.id], ids)
        ids += seed(restored, a, 10, 5)
        with restored.write() as w:
            w.delete_entries(a.id, ids[10:14])
        got = answers(restored, [a.id], ids)
        # the restored graph stays as it was (its 10 new rows are searched exactly)
        assert restored.vectors_indexed(a.id) == 80
    finally:
        restored.close()
    assert snapshotted(path) == {}  # the erasure dropped it
    fresh = opened(path)
    try:
        assert answers(fresh, [a.id], ids) == got
    finally:
        fresh.close()


@pytest.mark.parametrize("run", range(4))
def test_random_histories_of_two_processes(path: Path, run: int) -> None:
    """Two stores on one file add, change, erase and snapshot in a random order; a store
    reopened at the end answers as a rebuild, and as each of them does."""
    rng = np.random.default_rng(run)
    stores = [opened(path), opened(path)]
    memories = [make_memory(), make_memory()]
    ids: list[int] = []
    try:
        for step in range(12):
            store = stores[int(rng.integers(2))]
            memory = memories[int(rng.integers(2))]
            action = int(rng.integers(5))
            if action <= 1 or len(ids) < 10:
                ids += seed(store, memory, int(rng.integers(5, 40)), 100 * run + step)
            elif action == 2:
                picked = sorted({ids[int(i)] for i in rng.integers(0, len(ids), 5)})
                with store.write() as w:
                    w.update_entries(picked, {"status": int(rng.integers(2))})
            elif action == 3:
                gone = {ids[int(i)] for i in rng.integers(0, len(ids), 2)}
                with store.write() as w:
                    w.delete_entries(memory.id, sorted(gone))
            else:
                answers(store, [m.id for m in memories], ids)
                store.save_indexes()
        every = [m.id for m in memories]
        final = [answers(s, every, ids) for s in stores]
    finally:
        for s in stores:
            s.close()
    restored = assert_answers_as_rebuilt(path, every, ids)
    try:
        assert final == [answers(restored, every, ids)] * 2
    finally:
        restored.close()


def test_an_erasure_through_the_engine_leaves_no_trace(tmp_path: Path) -> None:
    """The engine's own erase path over a store with a snapshot: no file of the folder keeps
    the entry's word, its vector or the HNSW graph's int8 copy of it."""
    store = opened(tmp_path / "engine.db")
    engine = Engine(store, models=ModelRegistry(builtin=DeterministicEmbedder), clock=FrozenClock())
    alice = engine.principal(engine.create_user("alice").id)
    memory = engine.create_memory(
        alice, name="notes", memory_type=["raw"], embd_id="e@Builtin", llm_id="m@X"
    )
    turns = [TurnInput(text, user_id="u1") for text in corpus(40, 3)]
    engine.add_messages(alice, [memory.id], turns)
    (secret,) = engine.add_messages(alice, [memory.id], [TurnInput(f"my PIN is {SECRET}")])
    request = SearchRequest(SECRET, (memory.id,), top_n=5, similarity_threshold=0.0)
    assert engine.search(alice, request)[0].entry.message_id == secret.message_id
    vector = store._indexes.vectors.vectors([secret.message_id])[secret.message_id]
    block = store._indexes.vectors._blocks[memory.id]
    assert block.ann is not None
    quantized = block.ann._index.get(block.size - 1, dtype=np.int8).tobytes()
    store.save_indexes()
    engine.erase(alice, memory.id, secret.message_id, reason="asked")
    assert secret.message_id not in {h.entry.message_id for h in engine.search(alice, request)}
    engine.close()
    store.close()
    for file in (p for p in tmp_path.rglob("*") if p.is_file()):
        data = file.read_bytes()
        for trace in (SECRET.encode(), vector.tobytes(), quantized):
            assert trace not in data, (file.name, trace)


def test_a_restored_graph_grows_once_its_tail_is_long(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vectors_module, "VIEWED_TAIL", 8)
    a, ids = one_memory_snapshotted(path, 60)
    restored = opened(path)
    try:
        ids += seed(restored, a, 5, 2)
        answers(restored, [a.id], ids)
        assert restored.vectors_indexed(a.id) == 60  # 5 new rows: searched exactly
        ids += seed(restored, a, 5, 3)
        got = answers(restored, [a.id], ids)
        assert restored.vectors_indexed(a.id) == 70  # 10: a copy of the graph took them
        assert not restored._indexes.vectors._blocks[a.id].ann.viewed  # type: ignore[union-attr]
    finally:
        restored.close()
    fresh = opened(rebuilt_copy(path))
    try:
        assert answers(fresh, [a.id], ids) == got
    finally:
        fresh.close()


def test_a_big_first_matrix_lives_in_its_own_mapping(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(The first load's matrix past ``BIG_MATRIX`` bytes: here every one.) It answers as
    numpy's own, also after erasures and growth past its first size."""
    a, ids = one_memory_snapshotted(path, 60)
    expected = answers_at(rebuilt_copy(path), [a.id], ids)
    monkeypatch.setattr(vectors_module, "BIG_MATRIX", 0)
    store = opened(path)
    try:
        assert answers(store, [a.id], ids) == expected
        base: Any = store._indexes.vectors._blocks[a.id].rows
        while isinstance(base, np.ndarray):
            base = base.base
        assert isinstance(base.obj, mmap.mmap)  # a memoryview of the mapping
        ids += seed(store, a, 100, 4)  # past its room: grows as ever
        with store.write() as w:
            w.delete_entries(a.id, ids[5:9])
        got = answers(store, [a.id], ids)
    finally:
        store.close()
    monkeypatch.setattr(vectors_module, "BIG_MATRIX", 64 << 20)
    assert answers_at(rebuilt_copy(path), [a.id], ids) == got


def _log(path: Path) -> tuple[int, int | None, int]:
    """How far the change log was pruned, its oldest change kept, and how many it keeps."""
    with closing(sqlite3.connect(path)) as conn:
        (through,) = conn.execute("SELECT through FROM entry_changes_pruned").fetchone()
        oldest, count = conn.execute("SELECT min(seq), count(*) FROM entry_changes").fetchone()
    return int(through), oldest, int(count)


def test_a_process_behind_the_pruned_change_log_starts_over(path: Path) -> None:
    """Another process erases and changes rows, then prunes every change: this process can
    no longer read what it missed, so it starts its indexes over, and answers as a rebuild
    (the erased rows in no leg)."""
    here = opened(path)
    a = make_memory()
    ids = seed(here, a, 80, 1)
    answers(here, [a.id], ids)
    there = opened(path)
    try:
        with there.write() as w:
            w.update_entries(ids[3:9], {"status": 0})
            w.delete_entries(a.id, ids[10:20])
        with there.write() as w:
            prune_changes(w.conn, kept=0)
    finally:
        there.close()
    through, oldest, count = _log(path)
    assert through > 0 and oldest is None and count == 0
    try:
        got = answers(here, [a.id], ids)
        assert got == answers_at(rebuilt_copy(path), [a.id], ids)
        assert here._indexes._changes_seen >= through
        assert not {i for leg in got for i in _ids_in(leg)} & set(ids[10:20])
    finally:
        here.close()


def _ids_in(leg: Any) -> set[int]:
    """Message ids in one answer of :func:`answers` (pairs, neighbour maps or id lists)."""
    if isinstance(leg, dict):
        return set(leg) | {n for rings in leg.values() for ring in rings for n in ring}
    return {x[0] if isinstance(x, tuple) else x for x in leg}


def test_pruning_keeps_every_change_the_stored_snapshots_need(path: Path) -> None:
    a, ids = one_memory_snapshotted(path, 60)
    with closing(sqlite3.connect(path)) as conn:
        (mark,) = conn.execute("SELECT DISTINCT changes_seq FROM index_snapshots").fetchone()
    there = opened(path)
    b = make_memory()
    try:
        ids += seed(there, b, 30, 2)
        with there.write() as w:
            w.update_entries(ids[:5] + ids[60:65], {"status": 0})
            w.delete_entries(b.id, ids[70:72])  # b has no snapshot: a's stays
            prune_changes(w.conn, kept=0)
    finally:
        there.close()
    through, oldest, count = _log(path)
    assert through == mark and oldest is not None and oldest > mark and count == 12
    assert_answers_as_rebuilt(path, [a.id, b.id], ids).close()


def test_writes_prune_the_change_log_as_it_grows(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_module, "PRUNE_EVERY", 4)
    monkeypatch.setattr(indexes_module, "CHANGES_KEPT", 3)
    store = opened(path)
    try:
        a = make_memory()
        ids = seed(store, a, 20, 1)  # one write
        for i in range(10):  # ten more, two changes each
            with store.write() as w:
                w.update_entries(ids[i : i + 2], {"status": 0})
        through, oldest, count = _log(path)
        # pruned in the 4th and the 8th write (14 changes by then: the newest 3 kept), and 6
        # written since
        assert (through, oldest, count) == (11, 12, 9)
        assert answers(store, [a.id], ids) == answers_at(rebuilt_copy(path), [a.id], ids)
    finally:
        store.close()


def test_a_first_load_from_the_rows_reads_the_change_log_from_its_newest(path: Path) -> None:
    store = opened(path)
    a = make_memory()
    ids = seed(store, a, 20, 1)
    with store.write() as w:
        w.update_entries(ids[:4], {"status": 0})
    store.close()
    fresh = opened(path)
    try:
        assert answers(fresh, [a.id], ids) == answers_at(rebuilt_copy(path), [a.id], ids)
        assert fresh._indexes._changes_seen == 4  # not replayed: the rows already show them
    finally:
        fresh.close()

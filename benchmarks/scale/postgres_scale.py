"""PostgreSQL and SQLite at scale: many tenants in one database, one big memory, bulk loads.

tenants: a 1,000-entry memory searched (keyword and vector legs, store-only through the
Reader, retrieval filter, pool 50; and the engine's whole search, top 10, the query vectors
known) in a database that holds only it, and in one that also
holds SIZE entries in MEMORIES other memories, each of its own tenant; rows of all memories
are written interleaved, as tenants write at once. The same query runs on both databases in
turn (drift on busy cores hits both), twice over; the ratio of the p50s is the figure.

big: one memory of SIZE entries. The keyword leg on both stores, alone and with the
conversation windows a search draws beside it, PostgreSQL's also scoring every match (its
previous strategy, the reference for exactness) in the same run; the
agreement of each store's top 50 with SQLite FTS5's own bm25 over the same texts (equal
scores newer first); and the full hybrid search through the engine, query embedding by the
local MiniLM model included.

load: entries/s through ``Writer.insert_entries`` (PostgreSQL: one binary COPY per batch)
with and without the HNSW index, the index build, and turns/s through the engine's import.

    python -m benchmarks.scale.postgres_scale tenants --sizes 100000 1000000
    python -m benchmarks.scale.postgres_scale big --sizes 1000000
    python -m benchmarks.scale.postgres_scale load --sizes 100000

Texts are LoCoMo turns with a unique note each, vectors 384-d around 1,000 topics
(benchmarks/scale/postgres_vs_sqlite.py). Results merge into benchmarks/results/postgres_scale.json.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

from benchmarks.scale.postgres_vs_sqlite import (
    HNSW,
    POOL,
    T0,
    Corpus,
    make_corpus,
    memory,
    percentiles,
)
from benchmarks.support import RESULTS, load_average
from recallery.models import EntryType, Memory, NewEntry, Origin, Scope
from recallery.retrieval.plan import MIN_WINDOWS
from recallery.store.base import Store
from recallery.store.filters import EntryFilter
from recallery.store.postgres import PostgresStore, search
from recallery.store.sqlite import SQLiteStore
from recallery.testing.bm25 import Fts5Reference
from recallery.testing.postgres import server_setting

RESULT = RESULTS / "postgres_scale.json"
TARGET_ENTRIES = 1000
#: Rows a fill writes in one transaction. An import writes its whole file in one; each write
#: ends with work one core does alone (adding its term counts), so a million rows in 10,000-row
#: writes loaded about an eighth slower (9,373 against 10,632 entries/s, alternating).
BATCH = 100_000
RETRIEVAL = EntryFilter.retrieval(valid_on=T0)
ONE_USER_IN_TEN = EntryFilter.retrieval(valid_on=T0, user_id="u3")


# --- stores -------------------------------------------------------------------------------------


def tenant_memory(n: int) -> Memory:
    return replace(memory(), id=f"{n:032x}", tenant_id=f"tenant-{n}", name=f"memory-{n}")


def entry(m: Memory, text: str, n: int) -> NewEntry:
    return NewEntry(
        memory_id=m.id,
        tenant_id=m.tenant_id,
        message_type=EntryType.RAW,
        content=text,
        valid_at=T0,
        size_bytes=len(text.encode()) + 4 * 384,
        user_id=f"u{n % 10}",
        origin=Origin.IMPORT,
    )


Row = tuple[Memory, str, np.ndarray]


def write_rows(store: Store, memories: Sequence[Memory], rows: Sequence[Row]) -> float:
    """Insert the memories, then the rows through the writer in batches; entries/s."""
    with store.write() as w:
        for m in memories:
            w.insert_memory(m)
    t = time.perf_counter()
    written: dict[str, int] = {}  # a row's user follows its place in its own memory
    for start in range(0, len(rows), BATCH):
        chunk = rows[start : start + BATCH]
        entries = []
        for m, text, _ in chunk:
            n = written[m.id] = written.get(m.id, -1) + 1
            entries.append(entry(m, text, n))
        with store.write() as w:
            w.insert_entries(entries, np.stack([v for _, _, v in chunk]), T0)
    return len(rows) / (time.perf_counter() - t)


@contextmanager
def postgres_database(admin_dsn: str, name: str, hnsw: bool, reuse: bool = False) -> Iterator[str]:
    """A fresh database (``reuse``: the one of that name, when it exists)."""
    dsn = admin_dsn.rsplit("/", 1)[0] + "/" + name
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not (reuse and exists):
            conn.execute(f"DROP DATABASE IF EXISTS {name}")
            conn.execute(f"CREATE DATABASE {name}")
    if reuse and exists:
        yield dsn
        return
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    PostgresStore(dsn, pool_size=1).close()
    if not hnsw:
        execute(dsn, "DROP INDEX entries_hnsw_384")
    yield dsn


def shared_buffers(dsn: str) -> str:
    """The server's setting: how much of a big memory's pages it caches itself."""
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SHOW shared_buffers").fetchone()
    return str(row[0]) if row else "?"


def execute(dsn: str, *statements: str) -> float:
    """Run statements autocommit (index builds, VACUUM); the seconds they took."""
    t = time.perf_counter()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SET maintenance_work_mem = '2GB'")
        conn.execute("SET max_parallel_maintenance_workers = 2")
        for s in statements:
            conn.execute(s)
    return time.perf_counter() - t


def positions(store: Store, memory_id: str) -> dict[int, int]:
    """Message id -> the row's position among the memory's rows (both stores load in order)."""
    with store.read() as r:
        rows = r.conn.execute(
            "SELECT message_id FROM entries WHERE memory_id = ? ORDER BY message_id", [memory_id]
        )
    return {int(row[0]): k for k, row in enumerate(rows)}


# --- timing -------------------------------------------------------------------------------------

Leg = Callable[[Store, int], list[tuple[int, float]]]


def legs(corpus: Corpus, scope: Scope) -> dict[str, Leg]:
    def keyword(store: Store, q: int) -> list[tuple[int, float]]:
        with store.read() as r:
            return r.keyword_candidates(scope, corpus.queries[q], RETRIEVAL, POOL)

    def vector(store: Store, q: int) -> list[tuple[int, float]]:
        with store.read() as r:
            return r.vector_candidates(scope, corpus.query_vectors[q], RETRIEVAL, POOL)

    return {"keyword": keyword, "vector": vector}


def timed(leg: Leg, store: Store, q: int) -> tuple[float, list[int]]:
    t = time.perf_counter()
    hits = leg(store, q)
    return time.perf_counter() - t, [i for i, _ in hits]


def side_by_side(
    stores: dict[str, Store], leg: Leg, queries: int, rounds: int = 2
) -> tuple[dict[str, dict[str, float]], dict[str, list[list[int]]]]:
    """Each query on every store in turn (the order alternating), ``rounds`` times."""
    seconds: dict[str, list[float]] = {name: [] for name in stores}
    found: dict[str, list[list[int]]] = {name: [] for name in stores}
    for store in stores.values():
        leg(store, 0)  # warm the connection, caches and plans
    for r in range(rounds):
        for q in range(queries):
            names = list(stores) if (q + r) % 2 == 0 else list(reversed(stores))
            for name in names:
                s, ids = timed(leg, stores[name], q)
                seconds[name].append(s)
                if r == 0:
                    found[name].append(ids)
    return {n: percentiles(s) for n, s in seconds.items()}, found


# --- tenants ------------------------------------------------------------------------------------


def tenants_run(
    size: int,
    memories: int,
    queries: int,
    admin: str,
    work: Path,
    reuse: bool = False,
    kinds: Sequence[str] = ("postgres", "sqlite"),
) -> dict[str, Any]:
    """``reuse``: PostgreSQL keeps loaded databases (and skips CLUSTER, which would change
    them for the next run)."""
    target = tenant_memory(0)
    mine = make_corpus(TARGET_ENTRIES, queries, seed=11)
    others = make_corpus(size, 1, seed=12)
    rest = [tenant_memory(n) for n in range(1, memories + 1)]
    alone: list[Row] = [(target, t, v) for t, v in zip(mine.texts, mine.vectors, strict=True)]
    crowd: list[Row] = [
        (rest[k % memories], t, v)
        for k, (t, v) in enumerate(zip(others.texts, others.vectors, strict=True))
    ]
    # the target's rows at random places among the others', in their own order
    total = len(alone) + len(crowd)
    slots = set(np.random.default_rng(5).choice(total, len(alone), replace=False).tolist())
    mine_rows, their_rows = iter(alone), iter(crowd)
    mixed = [next(mine_rows) if i in slots else next(their_rows) for i in range(total)]
    result: dict[str, Any] = {"entries": size, "memories": memories + 1, "queries": queries}
    scope = Scope.of(target.id)
    for kind in kinds:
        with open_pair(kind, admin, work, size, reuse) as (solo, shared):
            timings: dict[str, Any] = {}
            if not (reuse and kind == "postgres" and loaded_pair(solo, shared, size)):
                timings["load_entries_per_s"] = {
                    "alone": write_rows(solo, [target], alone),
                    "shared": write_rows(shared, [target, *rest], mixed),
                }
                settle(kind, solo, shared)
            stores = {"alone": solo, "shared": shared}
            same: dict[str, float] = {}
            where = {n: positions(s, target.id) for n, s in stores.items()}
            search, stop = searching(mine, target)
            for name, leg in (legs(mine, scope) | {"search": search}).items():
                t, found = side_by_side(stores, leg, queries)
                t["ratio_p50"] = t["shared"]["p50_ms"] / t["alone"]["p50_ms"]
                timings[name] = t
                same[name] = float(
                    np.mean(
                        [
                            [where["alone"][i] for i in a] == [where["shared"][i] for i in b]
                            for a, b in zip(found["alone"], found["shared"], strict=True)
                        ]
                    )
                )
            stop()
            timings["identical_results"] = same
            if kind == "postgres" and not reuse:
                timings["clustered"] = clustered(stores, mine, scope, queries)
            timings["load_average"] = load_average()
            result[kind] = timings
            print(f"tenants {size:,} {kind}: {json.dumps(timings)}", flush=True)
    return result


def clustered(
    stores: dict[str, Store], corpus: Corpus, scope: Scope, queries: int
) -> dict[str, Any]:
    """The same legs after ``CLUSTER entries USING entries_memory_id`` (maintenance that puts
    each memory's rows on adjacent pages, as pg_repack does online)."""
    out: dict[str, Any] = {}
    for store in stores.values():
        assert isinstance(store, PostgresStore)
        out.setdefault("cluster_s", {})[store.dsn.rsplit("/", 1)[1]] = execute(
            store.dsn, "CLUSTER entries USING entries_memory_id", "ANALYZE entries"
        )
    for name, leg in legs(corpus, scope).items():
        t, _ = side_by_side(stores, leg, queries)
        t["ratio_p50"] = t["shared"]["p50_ms"] / t["alone"]["p50_ms"]
        out[name] = t
    return out


def loaded_pair(solo: Store, shared: Store, size: int) -> bool:
    assert isinstance(solo, PostgresStore) and isinstance(shared, PostgresStore)
    return loaded(solo, TARGET_ENTRIES) and loaded(shared, size + TARGET_ENTRIES)


@contextmanager
def open_pair(
    kind: str, admin: str, work: Path, size: int, reuse: bool = False
) -> Iterator[tuple[Store, Store]]:
    if kind == "sqlite":
        solo: Store = SQLiteStore(work / f"alone-{size}.db")
        shared: Store = SQLiteStore(work / f"shared-{size}.db")
        try:
            yield solo, shared
        finally:
            solo.close()
            shared.close()
        return
    with (
        postgres_database(admin, f"alone_{size}", hnsw=False, reuse=reuse) as a,
        postgres_database(admin, f"shared_{size}", hnsw=False, reuse=reuse) as b,
    ):
        solo, shared = PostgresStore(a, pool_size=2), PostgresStore(b, pool_size=2)
        try:
            yield solo, shared
        finally:
            solo.close()
            shared.close()


def settle(kind: str, *stores: Store) -> None:
    """What a running deployment has done by then: PostgreSQL's autovacuum and analyze (and
    the GIN pending list merged), SQLite's in-process indexes caught up."""
    for store in stores:
        if isinstance(store, PostgresStore):
            execute(store.dsn, "VACUUM ANALYZE")
        else:
            store.warm()


# --- one big memory -----------------------------------------------------------------------------


def every_match(
    store: PostgresStore, scope: Scope, text: str, f: EntryFilter
) -> list[tuple[int, float]]:
    """PostgreSQL scoring every match in one statement (the reference for exactness)."""
    with store.read() as r:
        return search.every_match(r.conn, scope, text, f, POOL)


def agreement(found: list[list[int]], reference: list[list[int]]) -> float:
    return float(
        np.mean([len(set(a) & set(b)) / len(b) for a, b in zip(found, reference, strict=True) if b])
    )


def big_run(
    size: int, queries: int, admin: str, work: Path, reuse: bool, stores: Sequence[str]
) -> dict[str, Any]:
    """Each store loaded and timed by itself (the other one not yet in memory)."""
    corpus = make_corpus(size, queries, seed=11)
    m = memory()
    rows: list[Row] = [(m, t, v) for t, v in zip(corpus.texts, corpus.vectors, strict=True)]
    t = time.perf_counter()
    reference = Fts5Reference(corpus.texts)
    ref = [[p for p, _ in reference.best(q, POOL)] for q in corpus.queries]
    reference.close()
    result: dict[str, Any] = {
        "entries": size,
        "queries": queries,
        "fts5_reference_s": time.perf_counter() - t,
    }
    loads: dict[str, float] = {}
    if "postgres" in stores:
        result["postgres"] = big_postgres(size, admin, corpus, m, rows, ref, reuse, loads)
    if "sqlite" in stores:
        result["sqlite"] = big_sqlite(size, work, corpus, m, rows, ref, loads)
    result["load"] = loads
    result["load_average"] = load_average()
    print(f"big {size:,}: {json.dumps(result)}", flush=True)
    return result


def big_postgres(
    size: int,
    admin: str,
    corpus: Corpus,
    m: Memory,
    rows: list[Row],
    ref: list[list[int]],
    reuse: bool,
    loads: dict[str, float],
) -> dict[str, Any]:
    with postgres_database(admin, f"big_{size}", hnsw=False, reuse=reuse) as dsn:
        pg = PostgresStore(dsn)  # the default pool: a search may take a second connection
        try:
            if not loaded(pg, size):
                loads["postgres_entries_per_s"] = write_rows(pg, [m], rows)
                loads["postgres_hnsw_build_s"] = execute(dsn, HNSW)
                execute(dsn, "VACUUM ANALYZE")
            timings = store_timings(pg, corpus, m, ref) | {"shared_buffers": shared_buffers(dsn)}
        finally:
            pg.close()
    print(f"big {size:,} postgres: {json.dumps(timings)}", flush=True)
    return timings


def big_sqlite(
    size: int,
    work: Path,
    corpus: Corpus,
    m: Memory,
    rows: list[Row],
    ref: list[list[int]],
    loads: dict[str, float],
) -> dict[str, Any]:
    lite = SQLiteStore(work / f"big-{size}.db")
    try:
        loads["sqlite_entries_per_s"] = write_rows(lite, [m], rows)
        t = time.perf_counter()
        lite.warm()
        loads["sqlite_warm_s"] = time.perf_counter() - t
        loads["sqlite_hnsw_build_s"] = sqlite_index_ready(lite, m.id, size)
        return store_timings(lite, corpus, m, ref)
    finally:
        lite.close()


def loaded(store: PostgresStore, size: int) -> bool:
    with store.read() as r:
        return int(r.conn.execute("SELECT count(*) FROM entries")[0][0]) == size


def sqlite_index_ready(
    store: SQLiteStore, memory_id: str, size: int, timeout: float = 1800
) -> float:
    """Wait until the SQLite store's background HNSW index covers every row (steady state,
    as PostgreSQL's after its build); the seconds it took."""
    t = time.perf_counter()
    while (store.vectors_indexed(memory_id) or 0) < size:
        if time.perf_counter() - t > timeout:
            raise TimeoutError(f"the SQLite HNSW index was not ready after {timeout} s")
        time.sleep(0.5)
    return time.perf_counter() - t


def store_timings(store: Store, corpus: Corpus, m: Memory, ref: list[list[int]]) -> dict[str, Any]:
    """The keyword leg (PostgreSQL: also scoring every match), with one user in ten, its
    agreement with FTS5, the engine's hybrid search, and the keyword leg again, warm."""
    scope = Scope.of(m.id)
    n = len(corpus.queries)
    timings, found = side_by_side({"top": store}, legs(corpus, scope)["keyword"], n, rounds=1)

    def one_in_ten(s: Store, q: int) -> list[tuple[int, float]]:
        with s.read() as r:
            return r.keyword_candidates(scope, corpus.queries[q], ONE_USER_IN_TEN, POOL)

    filtered, _ = side_by_side({"top": store}, one_in_ten, n, rounds=1)

    def with_windows(s: Store, q: int) -> list[tuple[int, float]]:
        with s.read() as r:
            text = corpus.queries[q]
            return r.keyword_and_windows(scope, text, RETRIEVAL, POOL, MIN_WINDOWS).windows

    windowed, _ = side_by_side({"top": store}, with_windows, n, rounds=1)
    where = positions(store, m.id)
    out: dict[str, Any] = {
        "keyword": timings["top"],
        "keyword_one_user_in_ten": filtered["top"],
        "keyword_and_windows": windowed["top"],
        "agreement_with_fts5": agreement([[where[i] for i in ids] for ids in found["top"]], ref),
    }
    if isinstance(store, PostgresStore):

        def full(s: Store, q: int) -> list[tuple[int, float]]:
            assert isinstance(s, PostgresStore)
            return every_match(s, scope, corpus.queries[q], RETRIEVAL)

        every, every_found = side_by_side({"all": store}, full, n, rounds=1)
        out["keyword_every_match"] = every["all"]
        out["exact_vs_every_match"] = float(
            np.mean([a == b for a, b in zip(found["top"], every_found["all"], strict=True)])
        )
    out["hybrid"] = hybrid(store, corpus, m)
    # once more after every other timing, the memory's pages now cached, as a busy memory's are
    warm, _ = side_by_side({"top": store}, legs(corpus, scope)["keyword"], n, rounds=1)
    out["keyword_warm"] = warm["top"]
    out["load_average"] = load_average()
    return out


def hybrid(store: Store, corpus: Corpus, m: Memory) -> dict[str, float]:
    """Engine.search: query embedding (local MiniLM), both legs, neighbours, fusion; timed
    twice over the questions, as the first pass runs on caches the every-match scoring and
    the other legs left (on PostgreSQL, shared buffers smaller than the data)."""
    from recallery.providers.local import LocalEmbedder

    embedder = LocalEmbedder()
    embedder.embed(["warm up"])
    engine, search = searcher(store, m, embedder)
    passes: list[list[float]] = [[], []]
    for seconds in passes:  # the first pass after the other legs, the second one warm
        for q in range(len(corpus.queries)):
            t = time.perf_counter()
            search(corpus.queries[q])
            seconds.append(time.perf_counter() - t)
    engine.usage.close()
    first = percentiles(passes[0])
    return percentiles(passes[1]) | {f"first_pass_{k}": v for k, v in first.items()}


def searcher(
    store: Store, m: Memory, embedder: Any
) -> tuple[Any, Callable[[str], list[tuple[int, float]]]]:
    """An engine over ``store`` whose model is ``embedder``, and its search in ``m`` as a
    client sends it (top 10, the defaults but no threshold) as (id, score) best first."""
    from recallery import Engine
    from recallery.models import User
    from recallery.providers.registry import ModelRegistry
    from recallery.requests import SearchRequest

    engine = Engine(store, models=ModelRegistry(builtin=lambda: embedder))
    with store.write() as w:
        w.update_memory(m.id, {"embd_id": "all-MiniLM-L6-v2@Builtin"})
        if w.user(m.tenant_id) is None:
            w.insert_user(User(id=m.tenant_id, name=m.tenant_id, is_admin=False, created_at=T0))
    actor = engine.principal(m.tenant_id)

    def search(text: str) -> list[tuple[int, float]]:
        request = SearchRequest(text, (m.id,), top_n=10, similarity_threshold=0)
        return [(h.entry.message_id, h.score) for h in engine.search(actor, request)]

    return engine, search


def searching(corpus: Corpus, m: Memory) -> tuple[Leg, Callable[[], None]]:
    """The engine's whole search in ``m`` with the query vectors known (both legs, windows
    where the store keeps them, neighbours, fusion, the entries read): what a tenant's search
    costs the store; and a call that stops the engines' usage threads."""
    embedder = KnownVectors(corpus.queries, corpus.query_vectors)
    engines: dict[int, tuple[Any, Callable[[str], list[tuple[int, float]]]]] = {}

    def search(store: Store, q: int) -> list[tuple[int, float]]:
        if id(store) not in engines:
            engines[id(store)] = searcher(store, m, embedder)
        hits: list[tuple[int, float]] = engines[id(store)][1](corpus.queries[q])
        return hits

    def stop() -> None:
        for engine, _ in engines.values():
            engine.usage.close()

    return search, stop


# --- load ---------------------------------------------------------------------------------------


def load_run(size: int, admin: str, writer_only: bool = False) -> dict[str, Any]:
    """Entries/s through the writer with and without the HNSW index, and the engine's import
    (``writer_only``: the first alone, for a million rows in minutes)."""
    corpus = make_corpus(size, 1, seed=13)
    m = memory()
    rows: list[Row] = [(m, t, v) for t, v in zip(corpus.texts, corpus.vectors, strict=True)]
    result: dict[str, Any] = {
        "entries": size,
        "batch": BATCH,
        "shared_buffers": shared_buffers(admin),
    }
    with postgres_database(admin, f"load_{size}", hnsw=False) as dsn:
        store = PostgresStore(dsn, pool_size=2)
        result["writer_no_hnsw_entries_per_s"] = write_rows(store, [m], rows)
        store.close()
        if not writer_only:
            result["hnsw_build_s"] = execute(dsn, HNSW)
    if not writer_only:
        result |= hnsw_and_import(admin, rows, corpus.texts, m)
    result["load_average"] = load_average()
    print(f"load {size:,}: {json.dumps(result)}", flush=True)
    return result


def hnsw_and_import(admin: str, rows: list[Row], texts: list[str], m: Memory) -> dict[str, Any]:
    """Entries/s through the writer with the HNSW index live, and the engine's import."""
    with postgres_database(admin, f"load_hnsw_{len(rows)}", hnsw=True) as dsn:
        store = PostgresStore(dsn, pool_size=2)
        live = write_rows(store, [m], rows[:20_000])
        store.close()
    known = KnownVectors(texts[:20_000], np.stack([r[2] for r in rows[:20_000]]))
    imports = {hnsw: import_rate(admin, known, hnsw) for hnsw in (False, True)}
    # Timed twice: 20,000 turns take a few seconds, and their rate moves by a tenth between
    # runs in one sitting (8,455-9,998 over five in a row in one server).
    warm = import_rate(admin, known, False)
    return {"writer_with_hnsw_entries_per_s": live, "import": imports, "import_again": warm}


class KnownVectors:
    """An embedder that returns the corpus's own vectors for its texts: an import's rate is
    then the engine's and the store's, not a model's (MiniLM embeds ~150 turns/s on two
    cores whatever the path; the fake embedder's hashing took 100 us a turn)."""

    model_id = "known"

    def __init__(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        self.texts = list(texts)
        self._row = {t: i for i, t in enumerate(self.texts)}
        self._vectors = vectors.astype(np.float32)

    @property
    def dimension(self) -> int:
        return int(self._vectors.shape[1])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._vectors[[self._row[t] for t in texts]]


def import_rate(admin: str, embedder: KnownVectors, hnsw: bool) -> float:
    """Turns/s of Engine.import_memory, 4,000 turns per memory (a memory holds 10 MB)."""
    from recallery import Engine
    from recallery.providers.registry import ModelRegistry

    texts = embedder.texts
    with postgres_database(admin, f"import_{int(hnsw)}", hnsw=hnsw) as dsn:
        engine = Engine(
            PostgresStore(dsn, pool_size=2), models=ModelRegistry(builtin=lambda: embedder)
        )
        actor = engine.principal(engine.create_user("importer").id)
        t = time.perf_counter()
        for start in range(0, len(texts), 4000):
            target = engine.create_memory(
                actor,
                name=f"import-{start}",
                memory_type=["raw"],
                embd_id="x@Builtin",
                llm_id="none@None",
                memory_size=10 * 1024 * 1024,
            )
            records = [
                {"record": "entry", "message_type": "raw", "content": x, "session_id": "s"}
                for x in texts[start : start + 4000]
            ]
            engine.import_memory(actor, target.id, records)
        rate = len(texts) / (time.perf_counter() - t)
        engine.close()
    return rate


# --- command line -------------------------------------------------------------------------------


def save(scenario: str, runs: list[dict[str, Any]], out: Path) -> None:
    """Merge into ``out``: a run replaces what it measured again and keeps the rest (a
    PostgreSQL-only rerun keeps the SQLite figures)."""
    data = json.loads(out.read_text()) if out.exists() else {}
    kept = data.setdefault(scenario, {})
    for run in runs:
        kept[str(run["entries"])] = kept.get(str(run["entries"]), {}) | run
    out.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("scenario", choices=["tenants", "big", "load"])
    parser.add_argument("--sizes", type=int, nargs="*", default=[100_000])
    parser.add_argument("--memories", type=int, default=1000, help="tenants: other memories")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--dsn", help="an admin DSN of a running server (default: embedded)")
    parser.add_argument(
        "--reuse", action="store_true", help="big, tenants: keep loaded PostgreSQL databases"
    )
    parser.add_argument("--stores", nargs="*", default=["postgres", "sqlite"], help="which stores")
    parser.add_argument("--out", type=Path, default=RESULT)
    parser.add_argument(
        "--writer-only", action="store_true", help="load: the writer without the HNSW index only"
    )
    parser.add_argument(
        "--pg-set",
        action="append",
        default=[],
        type=server_setting,
        metavar="NAME=VALUE",
        help="the embedded server's setting over the test defaults, e.g. shared_buffers=4GB",
    )
    args = parser.parse_args(argv)
    runs: list[dict[str, Any]] = []
    with (
        tempfile.TemporaryDirectory(prefix="recallery-scale-") as tmp,
        server(args.dsn, dict(args.pg_set)) as admin,
    ):
        for size in args.sizes:
            if args.scenario == "tenants":
                runs.append(
                    tenants_run(
                        size, args.memories, args.queries, admin, Path(tmp), args.reuse, args.stores
                    )
                )
            elif args.scenario == "big":
                runs.append(big_run(size, args.queries, admin, Path(tmp), args.reuse, args.stores))
            else:
                runs.append(load_run(size, admin, args.writer_only))
            save(args.scenario, runs, args.out)
    return 0


@contextmanager
def server(dsn: str | None, settings: dict[str, str]) -> Iterator[str]:
    if dsn is not None:
        yield dsn
        return
    from recallery.testing.postgres import EmbeddedPostgres

    with EmbeddedPostgres(settings=settings) as pg:
        yield pg.dsn


if __name__ == "__main__":
    raise SystemExit(main())

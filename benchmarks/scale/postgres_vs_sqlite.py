"""PostgreSQL beside SQLite: store-only search latency at scale, and LoCoMo recall per store.

Latency: one memory of N entries (LoCoMo turns, each with a unique note so texts differ, and
384-d unit vectors around 1,000 random topics), the same rows in both stores; queries are
LoCoMo questions with vectors drawn the same way. Timed through the stores' Reader
(``keyword_candidates`` / ``vector_candidates``, retrieval filter, pool 50), without and with
a filter that keeps one entry in ten. PostgreSQL is loaded with COPY and its HNSW index built
after the load; SQLite with ``executemany`` in large transactions. Also reported: the overlap
of PostgreSQL's top 50 with SQLite's (exact vectors; FTS5 BM25).

Recall: benchmarks/quality/recallery_locomo.py's retriever (engine write and search paths, local
MiniLM embedder with the on-disk cache) over each store.

    python -m benchmarks.scale.postgres_vs_sqlite --sizes 100000 --locomo \\
        --out benchmarks/results/pg.json
    python -m benchmarks.scale.postgres_vs_sqlite --sizes 100000 1000000 --queries 100
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from numpy.typing import NDArray
from pgvector.psycopg import register_vector

from benchmarks.quality.locomo import evaluate, load_conversations, markdown_table, select
from benchmarks.support import quantile_ms, write_json
from recallery.clock import to_epoch
from recallery.models import Memory, Scope
from recallery.settings import Settings
from recallery.store.base import Store
from recallery.store.filters import EntryFilter
from recallery.store.postgres import PostgresStore
from recallery.store.sqlite import SQLiteStore

DIM = 384
POOL = 50
USERS = 10
TOPICS = 1000
CHUNK = 50_000
T0 = datetime(2026, 1, 1, tzinfo=UTC)
COLUMNS = (
    "memory_id, tenant_id, message_type, content, embedding, valid_at, recorded_at, user_id, "
    "agent_id, session_id, status, trust, origin, use_count, size_bytes"
)
HNSW = (
    "CREATE INDEX entries_hnsw_384 ON entries USING hnsw ((embedding::vector(384)) "
    "vector_cosine_ops) WHERE vector_dims(embedding) = 384"
)


@dataclass(frozen=True)
class Corpus:
    texts: list[str]
    vectors: NDArray[np.float32]
    queries: list[str]
    query_vectors: NDArray[np.float32]


def unit(v: NDArray[np.float32]) -> NDArray[np.float32]:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def topic_vectors(
    rng: np.random.Generator, topics: NDArray[np.float32], n: int
) -> NDArray[np.float32]:
    """Unit vectors near one of ``topics`` each (cosine about 0.7 to it), as embeddings of
    texts on a limited number of subjects are. Uniformly random vectors are a worst case no
    approximate index is built for (PostgreSQL's HNSW finds 6% of the exact top 50 there)."""
    noise = unit(rng.standard_normal((n, DIM), dtype=np.float32))
    return unit(topics[rng.integers(0, len(topics), n)] + noise)


def make_corpus(size: int, queries: int, seed: int = 11) -> Corpus:
    conversations = load_conversations()
    turns = [f'{t.speaker} said, "{t.text}"' for c in conversations for t in c.turns]
    questions = [q.question for c in conversations for q in c.questions]
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(turns), size)
    texts = [f"{turns[p]} (note {i})" for i, p in enumerate(picks)]
    asked = [questions[i] for i in rng.choice(len(questions), queries, replace=False)]
    topics = unit(rng.standard_normal((TOPICS, DIM), dtype=np.float32))
    vectors = topic_vectors(rng, topics, size)
    return Corpus(texts, vectors, asked, topic_vectors(rng, topics, queries))


def memory() -> Memory:
    return Memory(
        id="b" * 32,
        tenant_id="bench",
        name="bench",
        memory_types=(),
        embd_id="x@Builtin",
        llm_id="none@None",
        memory_size=1 << 40,
        created_at=T0,
        updated_at=T0,
    )


def row(m: Memory, i: int, text: str) -> tuple[object, ...]:
    t = to_epoch(T0)
    size = len(text.encode()) + 4 * DIM
    return (m.id, m.tenant_id, "raw", text, None, t, t, f"u{i % USERS}", "", "", 1, "unreviewed",
            "import", 0, size)  # fmt: skip


# --- loading ----------------------------------------------------------------------------------


def load_sqlite(path: Path, corpus: Corpus) -> SQLiteStore:
    store = SQLiteStore(path, ann_threshold=Settings.from_env().ann_threshold)
    m = memory()
    with store.write() as w:
        w.insert_memory(m)
    marks = ",".join("?" * 15)
    raw = store._writer
    for start in range(0, len(corpus.texts), CHUNK):
        rows = [
            _with_vector(row(m, i, corpus.texts[i]), corpus.vectors[i].tobytes())
            for i in range(start, min(start + CHUNK, len(corpus.texts)))
        ]
        raw.execute("BEGIN IMMEDIATE")
        raw.executemany(f"INSERT INTO entries ({COLUMNS}) VALUES ({marks})", rows)
        raw.execute("COMMIT")
    return store


def _with_vector(values: tuple[object, ...], vector: object) -> tuple[object, ...]:
    return (*values[:4], vector, *values[5:])


def load_postgres(dsn: str, corpus: Corpus) -> tuple[PostgresStore, float]:
    """COPY the rows with the HNSW index dropped, then build it; returns the build seconds."""
    store = PostgresStore(dsn, pool_size=2)
    m = memory()
    with store.write() as w:
        w.insert_memory(m)
    with psycopg.connect(dsn) as conn:
        register_vector(conn)
        conn.execute("DROP INDEX IF EXISTS entries_hnsw_384")
        conn.commit()
        for start in range(0, len(corpus.texts), CHUNK):
            _copy_chunk(conn, m, corpus, start)
        conn.execute("SET maintenance_work_mem = '4GB'")
        conn.execute("SET max_parallel_maintenance_workers = 2")
        t = time.perf_counter()
        conn.execute(HNSW)
        conn.commit()
        built = time.perf_counter() - t
        conn.execute("ANALYZE entries")
        conn.commit()
    store.close()
    return PostgresStore(dsn, pool_size=2), built


def _copy_chunk(conn: psycopg.Connection[Any], m: Memory, corpus: Corpus, start: int) -> None:
    end = min(start + CHUNK, len(corpus.texts))
    with conn.cursor() as cur, cur.copy(f"COPY entries ({COLUMNS}) FROM STDIN") as copy:
        for i in range(start, end):
            copy.write_row(_with_vector(row(m, i, corpus.texts[i]), corpus.vectors[i]))
    conn.commit()


# --- timing -----------------------------------------------------------------------------------


def percentiles(seconds: Sequence[float]) -> dict[str, float | None]:
    return {
        "p50_ms": quantile_ms(seconds, 0.5, digits=None),
        "p95_ms": quantile_ms(seconds, 0.95, digits=None),
    }


Search = Callable[[Store, int], list[tuple[int, float]]]


def searches(corpus: Corpus) -> dict[str, Search]:
    scope = Scope(frozenset({memory().id}))
    plain = EntryFilter.retrieval(valid_on=T0)
    one_in_ten = EntryFilter.retrieval(valid_on=T0, user_id="u3")

    def keyword(f: EntryFilter) -> Search:
        def run(store: Store, q: int) -> list[tuple[int, float]]:
            with store.read() as r:
                return r.keyword_candidates(scope, corpus.queries[q], f, POOL)

        return run

    def vector(f: EntryFilter) -> Search:
        def run(store: Store, q: int) -> list[tuple[int, float]]:
            with store.read() as r:
                return r.vector_candidates(scope, corpus.query_vectors[q], f, POOL)

        return run

    return {
        "keyword": keyword(plain),
        "vector": vector(plain),
        "keyword, 1 in 10 users": keyword(one_in_ten),
        "vector, 1 in 10 users": vector(one_in_ten),
    }


def time_store(store: Store, corpus: Corpus) -> tuple[dict[str, Any], dict[str, list[list[int]]]]:
    timings: dict[str, Any] = {}
    found: dict[str, list[list[int]]] = {}
    for name, search in searches(corpus).items():
        search(store, 0)  # warm: caches, the SQLite vector copy
        seconds, ids = [], []
        for q in range(len(corpus.queries)):
            t = time.perf_counter()
            hits = search(store, q)
            seconds.append(time.perf_counter() - t)
            ids.append([i for i, _ in hits])
        timings[name] = percentiles(seconds)
        found[name] = ids
    return timings, found


def overlap(a: list[list[int]], b: list[list[int]], shift: int) -> float:
    """Mean |A ∩ B| / |B| over queries, A's ids shifted onto B's."""
    scores = [len({i - shift for i in x} & set(y)) / len(y) for x, y in zip(a, b, strict=True) if y]
    return float(np.mean(scores)) if scores else 1.0


def first_id(store: Store) -> int:
    with store.read() as r:
        return int(r.conn.execute("SELECT min(message_id) FROM entries")[0][0])


def sqlite_index_ready(store: SQLiteStore, corpus: Corpus, timeout: float = 1800.0) -> float:
    """One vector search (the store loads its vector copy and, past its threshold, starts the
    HNSW build in the background), then wait until the index covers every row: the timings
    are the steady state, as PostgreSQL's are after its index build. Returns the seconds."""
    t = time.perf_counter()
    searches(corpus)["vector"](store, 0)
    if len(corpus.texts) < Settings.from_env().ann_threshold:
        return 0.0
    while (store.vectors_indexed(memory().id) or 0) < len(corpus.texts):
        if time.perf_counter() - t > timeout:
            raise TimeoutError(f"the SQLite HNSW index was not ready after {timeout} s")
        time.sleep(0.5)
    return time.perf_counter() - t


def scale_run(size: int, queries: int, dsn: str, work: Path) -> dict[str, Any]:
    corpus = make_corpus(size, queries)
    t = time.perf_counter()
    lite = load_sqlite(work / f"bench-{size}.db", corpus)
    lite_load = time.perf_counter() - t
    lite_index = sqlite_index_ready(lite, corpus)
    t = time.perf_counter()
    pg, hnsw_s = load_postgres(dsn, corpus)
    pg_load = time.perf_counter() - t
    try:
        lite_t, lite_ids = time_store(lite, corpus)
        pg_t, pg_ids = time_store(pg, corpus)
        shift = first_id(pg) - first_id(lite)
    finally:
        lite.close()
        pg.close()
    return {
        "entries": size,
        "queries": queries,
        "load_s": {
            "sqlite": lite_load,
            "sqlite_hnsw_build": lite_index,
            "postgres": pg_load,
            "postgres_hnsw_build": hnsw_s,
        },
        "sqlite": lite_t,
        "postgres": pg_t,
        "agreement_top50": {n: overlap(pg_ids[n], lite_ids[n], shift) for n in pg_ids},
    }


# --- LoCoMo recall per store ------------------------------------------------------------------


def locomo_run(dsn: str, work: Path, convs: str | None) -> dict[str, Any]:
    from benchmarks.quality.recallery_locomo import CachingEmbedder
    from recallery.providers.local import LocalEmbedder

    conversations = select(load_conversations(), convs)
    embedder = CachingEmbedder(LocalEmbedder())
    results: dict[str, Any] = {}
    for name, store in (
        ("recallery on SQLite", lambda: SQLiteStore(work / "locomo.db")),
        ("recallery on PostgreSQL", lambda: PostgresStore(dsn)),
    ):
        retriever = retriever_on(store(), embedder)
        try:
            results[name] = evaluate(retriever, conversations)
        finally:
            retriever.close()
    return results


def retriever_on(store: Store, embedder: Any) -> Any:
    """benchmarks/quality/recallery_locomo.py's retriever, with its engine moved onto ``store``."""
    from benchmarks.quality.recallery_locomo import RecalleryRetriever
    from recallery import Engine
    from recallery.providers.registry import ModelRegistry

    retriever = RecalleryRetriever(embedder)
    retriever.engine.close()
    retriever.engine = Engine(store, models=ModelRegistry(builtin=lambda: embedder))
    retriever.actor = retriever.engine.principal(retriever.engine.create_user("bench").id)
    return retriever


# --- command line -----------------------------------------------------------------------------


def report(scale: list[dict[str, Any]]) -> str:
    lines = [
        "| entries | search | SQLite p50 / p95 ms | PostgreSQL p50 / p95 ms | top-50 agreement |",
        "|---|---|---|---|---|",
    ]
    for run in scale:
        for name, pg in run["postgres"].items():
            lite = run["sqlite"][name]
            lines.append(
                f"| {run['entries']:,} | {name} | {lite['p50_ms']:.1f} / {lite['p95_ms']:.1f} | "
                f"{pg['p50_ms']:.1f} / {pg['p95_ms']:.1f} | {run['agreement_top50'][name]:.3f} |"
            )
    loads = [
        f"{r['entries']:,}: SQLite {r['load_s']['sqlite']:.0f}s, PostgreSQL "
        f"{r['load_s']['postgres']:.0f}s (HNSW build {r['load_s']['postgres_hnsw_build']:.0f}s)"
        for r in scale
    ]
    return "\n".join([*lines, "", "load: " + "; ".join(loads)])


def main(argv: Sequence[str] | None = None) -> int:
    from recallery.testing.postgres import EmbeddedPostgres

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--locomo", action="store_true", help="also LoCoMo recall per store")
    parser.add_argument("--convs", help='LoCoMo conversations, e.g. "1-5" (default: all)')
    parser.add_argument("--out", type=Path, help="write the result JSON here")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {"scale": []}
    with tempfile.TemporaryDirectory(prefix="recallery-pg-bench-") as tmp, EmbeddedPostgres() as pg:
        for size in args.sizes:
            dsn = pg.create_database(f"scale_{size}")
            results["scale"].append(scale_run(size, args.queries, dsn, Path(tmp)))
            print(report(results["scale"][-1:]), flush=True)
        if args.locomo:
            results["locomo"] = locomo_run(pg.create_database("locomo"), Path(tmp), args.convs)
            print(markdown_table(results["locomo"]), flush=True)
    if args.out:
        print(f"wrote {write_json(args.out, results)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

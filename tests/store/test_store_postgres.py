"""The PostgreSQL store against the conformance suite, plus what only PostgreSQL has to show."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import psycopg
import pytest
from tests.support.engine import QueryFails

from recallery import Engine, SearchRequest
from recallery.errors import InvalidInput, ModelError, StoreError
from recallery.models import Memory, Scope
from recallery.providers.registry import ModelRegistry
from recallery.settings import Settings
from recallery.store import open_store
from recallery.store import postgres as pg_store
from recallery.store.backend import Backend
from recallery.store.filters import EntryFilter, where_clause
from recallery.store.postgres import PostgresStore, estimates, search, topk
from recallery.store.postgres import near as pg_near
from recallery.store.postgres.conn import PgConn, translate
from recallery.store.postgres.migrations import MIGRATIONS
from recallery.store.reader import Reader
from recallery.store.rows import MEMORY_ATTRS, db_value
from recallery.store.sql import Row, marks
from recallery.store.sqlite import SQLiteStore
from recallery.store.text import keyword_terms
from recallery.testing.bm25 import corpus, fts5_bm25
from recallery.testing.conformance import T0, StoreConformance, make_memory, new_entry, unit
from recallery.text.analyzer import analyze_all, query_terms

if TYPE_CHECKING:
    from recallery.testing.postgres import EmbeddedPostgres

pytestmark = pytest.mark.postgres


class TestPostgresConformance(StoreConformance):
    @pytest.fixture
    def store(self, postgres_store: PostgresStore) -> PostgresStore:
        return postgres_store


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT ? WHERE a = ?", "SELECT %s WHERE a = %s"),
        ("SELECT '?' , ?", "SELECT '?' , %s"),
        ("x LIKE ? ESCAPE '!'", "x LIKE %s ESCAPE '!'"),
        ("SELECT 'it''s ?', \"we?ird\", ?", "SELECT 'it''s ?', \"we?ird\", %s"),
        ("SELECT $$ ? $$, $tag$ ?'$tag$, ?", "SELECT $$ ? $$, $tag$ ?'$tag$, %s"),
        ("SELECT 1 -- ?\n, ? /* ? */", "SELECT 1 -- ?\n, %s /* ? */"),
        ("SELECT 5 % ?, '50%'", "SELECT 5 %% %s, '50%%'"),
        ("SELECT $1", "SELECT $1"),
    ],
)
def test_placeholders_translate_only_outside_literals(sql: str, expected: str) -> None:
    assert translate(sql) == expected


def test_a_postgres_url_selects_the_postgres_store(postgres_dsn: str, tmp_path: Path) -> None:
    store = open_store(Settings(data_dir=tmp_path, database_url=postgres_dsn))
    try:
        assert isinstance(store, PostgresStore)
    finally:
        store.close()
    assert not list(tmp_path.iterdir())
    default = open_store(Settings(data_dir=tmp_path))
    try:
        assert isinstance(default, SQLiteStore)
    finally:
        default.close()
    with pytest.raises(InvalidInput, match="postgresql://"):
        open_store(Settings(data_dir=tmp_path, database_url="mysql://x"))


# --- BM25 against SQLite's FTS5 ----------------------------------------------------------------


def test_bm25_ranks_and_scores_as_sqlite_fts5_does(postgres_store: PostgresStore) -> None:
    memory, texts = make_memory(), corpus(300)
    ids = StoreConformance().seed(postgres_store, memory, [(t, unit(1), {}) for t in texts])
    scope = Scope(frozenset({memory.id}))
    for query in ("hiking", "Paris marathon", "teachers teaching piano", "rivers river", "dog"):
        with postgres_store.read() as r:
            hits = r.keyword_candidates(scope, query, EntryFilter(), 300)
        pg = [(ids.index(i), score) for i, score in hits]
        reference = fts5_bm25(texts, query)
        assert len(pg) == len(reference) > 5, query
        assert [s for _, s in pg] == pytest.approx([s for _, s in reference], rel=1e-9), query
        # the same entry gets the same score (ties may come in either order)
        assert sorted((p, round(s, 9)) for p, s in pg) == sorted(
            (p, round(s, 9)) for p, s in reference
        )


# --- several processes on one database ---------------------------------------------------------


def test_processes_starting_together_apply_each_migration_once(
    postgres_server: EmbeddedPostgres,
) -> None:
    dsn = postgres_server.create_database(f"migrate_{uuid.uuid4().hex[:8]}")
    errors: list[BaseException] = []

    def start() -> None:
        try:
            PostgresStore(dsn, pool_size=1).close()
        except BaseException as exc:  # collected and re-raised in the test thread
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with psycopg.connect(dsn) as conn:
        versions = [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY 1")]
    assert versions == [version for version, _, _ in MIGRATIONS]


def test_a_claim_skips_jobs_another_worker_holds(postgres_store: PostgresStore) -> None:
    with postgres_store.write() as w:
        first, second = (
            w.enqueue_job(kind="extraction", tenant_id="t", memory_id="m", message_id=i, at=T0)
            for i in (1, 2)
        )
    held, release = threading.Event(), threading.Event()
    claimed: list[int] = []

    def hold() -> None:
        with postgres_store.write() as w:
            job = w.claim_job(T0, 60, "worker-a")
            claimed.append(job.id if job else -1)
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    assert held.wait(10)
    started = time.monotonic()
    try:
        with postgres_store.write() as w:
            job = w.claim_job(T0, 60, "worker-b")
    finally:
        release.set()
        holder.join()
    assert claimed == [first] and job is not None and job.id == second
    assert time.monotonic() - started < 2, "the claim waited for the other worker's lock"


# --- search paths only PostgreSQL has ----------------------------------------------------------


def _a_second_connection_comes(store: PostgresStore, wait_s: float = 5.0) -> bool:
    """Whether work beside a read gets a connection of its own within ``wait_s`` (the pool
    grows in the background, so the first tries may run in the caller)."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        with store.read() as r, store.beside(r, _backend_and_rows) as result:
            if result()[0] != _backend_and_rows(r)[0]:
                return True
        time.sleep(0.05)
    return False


def test_a_search_whose_query_embedding_fails_gives_both_connections_back(
    postgres_store: PostgresStore, postgres_dsn: str
) -> None:
    """The keyword leg has started beside when the embedding fails: the error reaches the
    caller and neither connection is lost (a pool of two has a second one free after)."""
    store = PostgresStore(postgres_dsn, pool_size=2)  # postgres_store emptied the database
    engine = Engine(store, models=ModelRegistry(builtin=QueryFails))
    try:
        alice = engine.principal(engine.create_user("alice").id)
        memory = engine.create_memory(
            alice, name="n", memory_type=["raw"], embd_id="x@Builtin", llm_id="none@None"
        )
        engine.add_turn(alice, [memory.id], user_input="I moved to Berlin.", agent_response="ok")
        for _ in range(4):
            with pytest.raises(ModelError, match="down"):
                engine.search(alice, SearchRequest("boom", (memory.id,)))
        engine.usage.flush()
        assert _a_second_connection_comes(store)
        hits = engine.search(alice, SearchRequest("Berlin", (memory.id,)))
        assert [h.entry.content for h in hits] == [
            "User Input: I moved to Berlin.\nAgent Response: ok"
        ]
    finally:
        engine.close()
        store.close()


def _backend_and_rows(r: Reader) -> tuple[int, int]:
    row = r.conn.execute("SELECT pg_backend_pid(), (SELECT count(*) FROM entries)")[0]
    return int(row[0]), int(row[1])


def test_the_keyword_rounds_are_planned_for_their_own_values(
    postgres_store: PostgresStore,
) -> None:
    """A generic plan for every memory and query read a small memory's rows by a B-tree
    (16x slower after a CLUSTER; the benchmark's tenants scenario shows it), so a round is
    never prepared, however often it runs, while the statements around it keep their generic
    plans; parallel workers cost a keyword round more than they share, so the keyword
    transaction runs without them (and only it)."""
    memory = make_memory()
    texts = ["green tea at noon", "tea with Li", "чай и тишина", "coffee, not tea"]
    with postgres_store.write() as w:
        w.insert_memory(memory)
        w.insert_entries([new_entry(memory, t) for t in texts], np.stack([unit(1)] * 4), T0)
    scope = Scope.of(memory.id)
    settings = "SELECT current_setting('plan_cache_mode'), " + (
        "current_setting('max_parallel_workers_per_gather')"
    )
    prepared = (
        "SELECT count(*) FILTER (WHERE statement LIKE '%WITH c AS MATERIALIZED%'), "
        "count(*) FILTER (WHERE statement LIKE '%FROM fts_docs d%') FROM pg_prepared_statements"
    )
    with postgres_store.read() as r:
        before = tuple(r.conn.execute(settings)[0])
        for _ in range(8):  # psycopg prepares a statement run five times
            assert len(r.keyword_candidates(scope, "tea", EntryFilter(), 5)) == 3
        during = tuple(r.conn.execute(settings)[0])
        rounds, statistics = r.conn.execute(prepared)[0]
    with postgres_store.read() as r:
        after = tuple(r.conn.execute(settings)[0])
    assert (before, during, after) == (("auto", "2"), ("auto", "0"), ("auto", "2"))
    assert (rounds, statistics) == (0, 1)


def test_the_keyword_key_function_is_priced_above_an_index_read(
    postgres_store: PostgresStore,
) -> None:
    """Priced as an operator, building a row's keys looked cheaper than reading the keyword
    index: with 3M entries in 3,000 memories the planner fetched a small memory's rows by
    memory id and built every row's keys (172 ms a statement; 8 ms ANDing both indexes)."""
    with postgres_store.read() as r:
        rows = r.conn.execute("SELECT procost FROM pg_proc WHERE proname = 'recallery_fts_keys'")
    assert [float(c) for (c,) in rows] == [1000.0]


def test_maintenance_builds_the_keyword_keys_with_only_pg_catalog_on_the_search_path(
    postgres_store: PostgresStore, postgres_dsn: str
) -> None:
    """VACUUM, ANALYZE and index builds evaluate index expressions with a search path of
    pg_catalog alone; the keys function must find everything it calls there (a PL/pgSQL body
    that called recallery_fts_tier failed every ANALYZE of entries)."""
    memory = make_memory()
    texts = ["tea at noon", "green tea and rice", "!!!", "Café-au-lait, NAÏVE ½"]
    with postgres_store.write() as w:
        w.insert_memory(memory)
        w.insert_entries([new_entry(memory, t) for t in texts], np.stack([unit(1)] * 4), T0)
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute("ANALYZE entries")
        conn.execute("REINDEX INDEX entries_fts_keys")
        keys = conn.execute(
            "SELECT count(*) FROM entries e WHERE recallery_fts_keys(e.memory_id, e.user_id, "
            "e.fts, e.fts_len) @@ %s::tsquery",
            [f"tea/{topk.tier(3)}/{topk.memory_key(memory.id)}"],
        ).fetchone()
    assert keys == (2,)  # both teas are under 8 tokens: tier 0
    with postgres_store.read() as r:
        assert [i for i, _ in r.keyword_candidates(Scope.of(memory.id), "tea", EntryFilter(), 5)]


def test_work_beside_a_read_runs_on_another_connection_with_its_snapshot(
    postgres_store: PostgresStore,
) -> None:
    memory = make_memory()
    with postgres_store.write() as w:
        w.insert_memory(memory)
        w.insert_entries([new_entry(memory, "before the read")], np.stack([unit(1)]), T0)
    with postgres_store.read() as r:
        here, seen = _backend_and_rows(r)
        with postgres_store.write() as w:  # committed by another transaction meanwhile
            w.insert_entries([new_entry(memory, "after it began")], np.stack([unit(1)]), T0)
        with postgres_store.beside(r, _backend_and_rows) as result:
            there, seen_there = result()
    assert seen == seen_there == 1 and there != here


def test_work_beside_a_read_runs_in_the_caller_when_no_connection_is_free(
    postgres_dsn: str,
) -> None:
    store = PostgresStore(postgres_dsn, pool_size=1)
    try:
        with store.read() as r, store.beside(r, _backend_and_rows) as result:
            assert result() == _backend_and_rows(r)
    finally:
        store.close()


@pytest.fixture
def hnsw_store(postgres_server: EmbeddedPostgres) -> Iterator[PostgresStore]:
    """A store whose planner must take the HNSW index (it prefers exact scans on tiny tables)."""
    name = f"hnsw_{uuid.uuid4().hex[:8]}"
    dsn = postgres_server.create_database(name)
    with psycopg.connect(dsn, autocommit=True) as conn:
        for setting in ("enable_seqscan", "enable_bitmapscan", "enable_sort"):
            conn.execute(f"ALTER DATABASE {name} SET {setting} = off")
    store = PostgresStore(dsn, pool_size=2)
    yield store
    store.close()


def test_filtered_search_on_the_hnsw_index_fills_the_limit(
    hnsw_store: PostgresStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert 384 in hnsw_store.indexed_dims
    monkeypatch.setattr(search, "EXACT_MAX_ROWS", 100)  # this scope has 600 entries
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(600, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    users = ["u1" if n % 10 == 0 else "u2" for n in range(600)]
    memory, other = make_memory(), make_memory()
    rows = [("x", v, {"user_id": u, "size_bytes": 1}) for v, u in zip(vectors, users, strict=True)]
    ids = StoreConformance().seed(hnsw_store, memory, rows)
    StoreConformance().seed(hnsw_store, other, rows)
    query = vectors[0] + 0.1 * vectors[1]
    query /= np.linalg.norm(query)
    scope, f = Scope(frozenset({memory.id})), EntryFilter(user_id="u1")
    where, params = where_clause(scope, f)
    indexed = search.vector_sql(where, 384, indexed=True)
    with hnsw_store.read() as r:
        plan = r.conn.execute("EXPLAIN " + indexed, [query, *params, 10])
        from_index = r.conn.execute(indexed, [query, *params, 10])
        hits = r.vector_candidates(scope, query, f, 10)
    assert "entries_hnsw_384" in " ".join(str(p[0]) for p in plan)
    # ef_search is 40, so only the iterative scan finds 10 rows when 9 in 10 are filtered out
    assert len(from_index) == 10
    wanted = [n for n in range(600) if users[n] == "u1"]
    exact = sorted(wanted, key=lambda n: -float(vectors[n] @ query))[:10]
    found = [ids.index(i) for i, _ in hits]
    assert len(found) == 10 and set(found) <= set(wanted)  # 90% filtered out, still 10 rows
    assert len(set(found) & set(exact)) >= 9
    sims = [s for _, s in hits]
    assert sims == sorted(sims, reverse=True)
    assert sims[0] == pytest.approx(float(vectors[found[0]] @ query), abs=1e-5)


def test_an_hnsw_index_added_while_the_store_runs_is_used_without_a_restart(
    postgres_server: EmbeddedPostgres, monkeypatch: pytest.MonkeyPatch
) -> None:
    dsn = postgres_server.create_database(f"late_{uuid.uuid4().hex[:8]}")
    PostgresStore(dsn).close()  # the schema, with its index
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP INDEX entries_hnsw_384")  # as for a bulk load
    store = PostgresStore(dsn, pool_size=2)
    try:
        memory, vectors = make_memory(), np.eye(5, 384, dtype=np.float32)
        ids = StoreConformance().seed(store, memory, [("x", v, {}) for v in vectors])
        scope, f = Scope(frozenset({memory.id})), EntryFilter()
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(
                "CREATE INDEX entries_hnsw_384 ON entries USING hnsw "
                "((embedding::vector(384)) vector_cosine_ops) WHERE vector_dims(embedding) = 384"
            )
        with store.read() as r:
            before = r.vector_candidates(scope, vectors[2], f, 3)
        assert 384 not in store.indexed_dims  # looked at when the store opened, moments ago
        monkeypatch.setattr(pg_store, "INDEX_RECHECK_S", 0.0)
        with store.read() as r:
            after = r.vector_candidates(scope, vectors[2], f, 3)
        assert 384 in store.indexed_dims
        assert after == before and after[0][0] == ids[2]
    finally:
        store.close()


# --- erasure -----------------------------------------------------------------------------------


def _tuples_holding(dsn: str, table: str, needle: bytes) -> int:
    """Heap tuples (live or dead, not yet pruned) of ``table`` whose bytes contain ``needle``."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pageinspect")
        row = conn.execute(
            "SELECT count(*) FROM generate_series(0, "
            "  (pg_relation_size(%s::regclass) / current_setting('block_size')::int) - 1) p, "
            "  heap_page_items(get_raw_page(%s, p::int)) h "
            "WHERE h.t_data IS NOT NULL AND position(%s::bytea IN h.t_data) > 0",
            [table, table, needle],
        ).fetchone()
    return int(row[0]) if row else 0


def test_erasure_drops_term_statistics_and_scrub_prunes_the_rows(
    postgres_store: PostgresStore, postgres_dsn: str
) -> None:
    memory = make_memory()
    secret, kept = StoreConformance().seed(
        postgres_store,
        memory,
        [("Zanzibar secret seventy", unit(1), {}), ("tea with milk", unit(1), {})],
    )
    with postgres_store.write() as w:
        w.delete_entries(memory.id, [secret])
    with psycopg.connect(postgres_dsn) as conn:
        terms = {r[0] for r in conn.execute("SELECT term FROM fts_terms")}
        docs = conn.execute("SELECT docs, tokens FROM fts_docs").fetchall()
    assert terms == {"tea", "milk"} and docs == [(1, 3)]  # a stop word counts, unindexed
    assert _tuples_holding(postgres_dsn, "entries", b"Zanzibar") == 1  # dead, not yet pruned
    postgres_store.scrub()
    for table, needle in (("entries", b"Zanzibar"), ("fts_terms", b"zanzibar")):
        assert _tuples_holding(postgres_dsn, table, needle) == 0, table
    scope = Scope(frozenset({memory.id}))
    with postgres_store.read() as r:
        assert [i for i, _ in r.keyword_candidates(scope, "zanzibar tea", EntryFilter(), 5)] == [
            kept
        ]


# --- top-k BM25 --------------------------------------------------------------------------------

TOPK_QUERIES = (
    "hiking mountains river",
    "Paris marathon concert piano",
    "teachers teaching sister birthday party",
    "dog dogs running runner",
    "garden gardening cooking cooked painting travel",
    "tea",
)


def _every_match(
    store: PostgresStore, scope: Scope, text: str, f: EntryFilter, limit: int
) -> list[tuple[int, float]]:
    """The reference: every match scored, best first, equal scores newer first."""
    with store.read() as r:
        return search.every_match(r.conn, scope, text, f, limit)


@pytest.mark.parametrize(
    ("split", "heap"),
    [(0, ()), (topk.SPLIT_POSTINGS, ()), (topk.SPLIT_POSTINGS, ("memory_id", "user_id"))],
)
def test_top_k_bm25_in_rounds_equals_scoring_every_match(
    postgres_store: PostgresStore,
    monkeypatch: pytest.MonkeyPatch,
    split: int,
    heap: tuple[str, ...],
) -> None:
    monkeypatch.setattr(topk, "SCORE_ALL_BELOW", 0)  # plan rounds even on this small corpus
    # the user checked through the index and on the rows read: the same matches either way
    monkeypatch.setattr(search, "HEAP_CHECKED", heap)
    monkeypatch.setattr(topk, "SPLIT_POSTINGS", split)  # 0: every clause a scan per tier
    monkeypatch.setattr(search, "BITMAP_ROWS_IN_DEFAULT", 0)  # and size work_mem for bitmaps
    rounds: list[bool] = []
    real_round = search._round

    def counted(*args: object, **kwargs: object) -> object:
        rounds.append(args[2] is not None)  # a planned round, not every match at once
        return real_round(*args, **kwargs)  # type: ignore[arg-type]

    memory, other = make_memory(), make_memory()
    texts = corpus(1500) * 2  # every text twice: equal scores at every rank
    users = [{"user_id": f"u{i % 3}"} for i in range(len(texts))]
    ids = StoreConformance().seed(
        postgres_store, memory, [(t, unit(1), u) for t, u in zip(texts, users, strict=True)]
    )
    StoreConformance().seed(postgres_store, other, [(t, unit(1), {}) for t in corpus(500, seed=3)])
    with postgres_store.write() as w:  # erased entries leave the term bounds looser, not wrong
        w.delete_entries(memory.id, ids[::7])
    scope = Scope(frozenset({memory.id}))
    monkeypatch.setattr(search, "_round", counted)
    for f in (EntryFilter(), EntryFilter(user_id="u1")):
        for limit in (1, 10, 50):
            for text in TOPK_QUERIES:
                with postgres_store.read() as r:
                    found = search.keyword_search(r.conn, scope, text, f, limit)
                assert found == _every_match(postgres_store, scope, text, f, limit), (text, limit)
                assert len(found) == limit
    assert sum(rounds) > 2 * 3 * len(TOPK_QUERIES)  # every search planned, some in two rounds


#: Three people in one memory saying the same things about themselves, in Chinese and Russian
#: (every term each search asks for is in every person's turns), and another memory beside.
SHARED_SAYINGS = [
    "我住在上海，在银行工作。",
    "我搬到了北京，现在在医院工作。",
    "Я живу в Казани и работаю в банке.",
    "Я переехала в Москву и работаю в больнице.",
]


@pytest.mark.parametrize("heap", [(), ("memory_id", "user_id")])
def test_a_round_finds_one_persons_turns_whether_it_checks_them_on_the_rows_or_by_index(
    postgres_store: PostgresStore, monkeypatch: pytest.MonkeyPatch, heap: tuple[str, ...]
) -> None:
    monkeypatch.setattr(topk, "SCORE_ALL_BELOW", 0)  # plan rounds even on this small corpus
    monkeypatch.setattr(search, "HEAP_CHECKED", heap)
    memory, other = make_memory(), make_memory()
    rows = [(t, unit(1), {"user_id": u}) for u in ("ana", "bo", "cy") for t in SHARED_SAYINGS]
    ids = StoreConformance().seed(postgres_store, memory, rows * 3)
    theirs = StoreConformance().seed(postgres_store, other, rows)
    whose = {i: r[2]["user_id"] for i, r in zip(ids, rows * 3, strict=True)}
    scope = Scope.of(memory.id)
    for text in ("银行 工作", "上海", "работаю в банке", "Москву"):
        for user in ("ana", "bo", "cy"):
            f = EntryFilter(user_id=user)
            with postgres_store.read() as r:
                found = search.keyword_search(r.conn, scope, text, f, 50)
            assert found == _every_match(postgres_store, scope, text, f, 50), (text, user)
            assert found and {whose[i] for i, _ in found} == {user}
            assert not {i for i, _ in found} & set(theirs)


def test_the_keyword_index_gives_one_persons_matches_only(postgres_store: PostgresStore) -> None:
    """Migration 29: a round for one person's entries asks the keyword index for that person's
    key too, so the rows it reads are that person's matches, not every match of the memory
    (three people here, and another memory with the same people and words beside)."""
    memory, other = make_memory(), make_memory()
    rows = [(t, unit(1), {"user_id": u}) for u in ("ana", "bo", "cy") for t in SHARED_SAYINGS]
    ids = StoreConformance().seed(postgres_store, memory, rows * 2)
    StoreConformance().seed(postgres_store, other, rows)
    whose = {i: r[2]["user_id"] for i, r in zip(ids, rows * 2, strict=True)}
    scope = Scope.of(memory.id)
    with postgres_store.read() as r:
        stats = search._statistics(r.conn, [memory.id], query_terms("银行 工作"))
        assert stats is not None
        terms = stats.terms
        clause = (tuple(range(len(terms))), topk.ALL_TIERS)
        keys = [topk.memory_key(memory.id)]
        for user in ("ana", "bo", None):
            person = topk.person_key(user) if user else None
            read = {
                int(i)
                for q in topk.tsqueries(terms, clause, keys, person)
                for (i,) in r.conn.execute(
                    "SELECT e.message_id FROM entries e WHERE "
                    "recallery_fts_keys(e.memory_id, e.user_id, e.fts, e.fts_len) @@ ?::tsquery",
                    [q],
                )
            }
            people = {whose[i] for i in read}
            assert read and people == ({user} if user else {"ana", "bo", "cy"})
        found = search.keyword_search(r.conn, scope, "银行 工作", EntryFilter(user_id="bo"), 50)
    assert found and {whose[i] for i, _ in found} == {"bo"}


def test_the_keyword_index_keys_are_the_planners_tiers_and_memory_keys(
    postgres_store: PostgresStore,
) -> None:
    lengths = sorted({0, 1, *topk.LENGTH_TIERS, *(n - 1 for n in topk.LENGTH_TIERS), 10**6})
    with postgres_store.read() as r:
        tiers = r.conn.execute(
            "SELECT recallery_fts_tier(n) FROM unnest(?::int[]) n ORDER BY n", [lengths]
        )
        keys = r.conn.execute(
            "SELECT tsvector_to_array(recallery_fts_keys(?, p, recallery_fts_doc(t), 9)) "
            "FROM unnest(?::text[], ?::text[]) AS x(p, t)",
            ["Mémoire-7", ["Zoë", None, "Zoë"], ["Tea, teas and milk", "tea", "!!!"]],
        )
    assert [t[0] for t in tiers] == [topk.tier(n) for n in lengths]
    key, zoe, nobody = (
        topk.memory_key("Mémoire-7"),
        topk.person_key("Zoë"),
        topk.person_key(""),
    )
    assert [sorted(k[0]) for k in keys] == [
        sorted([f"and/1/{key}", f"milk/1/{key}", f"tea/1/{key}", f"/{zoe}/{key}"]),
        sorted([f"tea/1/{key}", f"/{nobody}/{key}"]),  # no user: the person ''
        [],  # no terms, no keys: it matches no keyword query
    ]


def test_equal_scores_come_newest_first(postgres_store: PostgresStore) -> None:
    memory = make_memory()
    ids = StoreConformance().seed(postgres_store, memory, [("tea with milk", unit(1), {})] * 5)
    with postgres_store.read() as r:
        hits = r.keyword_candidates(Scope(frozenset({memory.id})), "tea", EntryFilter(), 5)
    assert [i for i, _ in hits] == sorted(ids, reverse=True)
    assert len({s for _, s in hits}) == 1


# --- migrations in place -----------------------------------------------------------------------

#: BM25 as the store computed it at schema 7 (scoring every match), to compare against.
_SCHEMA_7_BM25 = """
WITH q AS (
    SELECT t.ord, l.lexeme FROM unnest(?::text[]) WITH ORDINALITY AS t(word, ord)
    CROSS JOIN LATERAL unnest(recallery_fts_doc(t.word)) AS l
), s AS (
    SELECT coalesce(sum(d.docs), 0)::float8 AS n,
           coalesce(sum(d.tokens), 0)::float8 / greatest(coalesce(sum(d.docs), 0), 1) AS avgdl
    FROM fts_docs d WHERE d.memory_id = ?
), w AS (
    SELECT q.ord, q.lexeme,
           greatest(ln((s.n - coalesce(sum(t.df), 0) + 0.5) / (coalesce(sum(t.df), 0) + 0.5)),
                    1e-6) AS idf
    FROM q CROSS JOIN s LEFT JOIN fts_terms t ON t.term = q.lexeme AND t.memory_id = ?
    GROUP BY q.ord, q.lexeme, s.n
), l AS (
    SELECT array_agg(DISTINCT lexeme) AS lexemes,
           string_agg('''' || lexeme || '''', ' | ')::tsquery AS query FROM q
)
SELECT e.message_id, sum(w.idf * cardinality(u.positions) * 2.2
           / (cardinality(u.positions) + 1.2 * (0.25 + 0.75 * e.fts_len / s.avgdl))) AS score
FROM l CROSS JOIN s JOIN entries e ON e.fts @@ l.query
CROSS JOIN LATERAL unnest(ts_filter(setweight(e.fts, 'A', l.lexemes), '{a}')) u
JOIN w ON w.lexeme = u.lexeme
WHERE e.memory_id = ? GROUP BY e.message_id
"""


def _tie_order(hits: list[tuple[int, float]], limit: int) -> list[tuple[int, float]]:
    rounded = sorted(((i, round(s, 9)) for i, s in hits), key=lambda h: (-h[1], -h[0]))
    return rounded[:limit]


def _seed_as_then(store: PostgresStore, memory: Memory, texts: list[str]) -> list[int]:
    """The memory's row with the columns an older schema had (no ``local_model``, migration
    22), then its entries."""
    columns = [c for c in MEMORY_ATTRS if c != "local_model"]
    values = [db_value(getattr(memory, c)) for c in columns]
    with store.write() as w:
        w.conn.execute(
            f"INSERT INTO memories ({', '.join(columns)}) VALUES ({marks(len(values))})", values
        )
        vectors = np.stack([unit(1) for _ in texts]).astype(np.float32)
        return w.insert_entries([new_entry(memory, t) for t in texts], vectors, T0)


@pytest.mark.parametrize("version", [7, 10])
def test_a_database_at_an_older_schema_with_data_migrates_in_place_and_answers_alike(
    postgres_server: EmbeddedPostgres, monkeypatch: pytest.MonkeyPatch, version: int
) -> None:
    dsn = postgres_server.create_database(f"upgrade_{uuid.uuid4().hex[:8]}")
    monkeypatch.setattr(pg_store, "MIGRATIONS", tuple(m for m in MIGRATIONS if m[0] <= version))
    # the store at that schema, writing as it did then: portable SQL, the server tokenising
    monkeypatch.setattr(pg_store.PostgresStore, "insert_entry_rows", Backend.insert_entry_rows)
    old = PostgresStore(dsn, pool_size=1)
    assert old.schema_version() == version
    memory, texts = make_memory(), corpus(800) * 2
    ids = _seed_as_then(old, memory, texts)
    before = {}
    with old.read() as r:
        turns = r.neighbours(Scope.of(memory.id), ids[::97], EntryFilter(), 2)
        for text in TOPK_QUERIES:
            rows = r.conn.execute(
                _SCHEMA_7_BM25, [keyword_terms(text), memory.id, memory.id, memory.id]
            )
            before[text] = _tie_order([(int(i), float(s)) for i, s in rows], 20)
    old.close()
    monkeypatch.undo()
    monkeypatch.setattr(topk, "SCORE_ALL_BELOW", 0)
    store = PostgresStore(dsn, pool_size=1)
    try:
        assert store.schema_version() == MIGRATIONS[-1][0]
        with store.read() as r:  # the memory's local model, filled in by migration 22
            assert (moved := r.memory(memory.id)) is not None and moved.local_model
        scope = Scope(frozenset({memory.id}))
        for text in TOPK_QUERIES:
            with store.read() as r:
                after = r.keyword_candidates(scope, text, EntryFilter(), 20)
                plan = r.conn.execute(
                    "EXPLAIN SELECT 1 FROM entries e WHERE "
                    "recallery_fts_keys(e.memory_id, e.user_id, e.fts, e.fts_len) @@ ?::tsquery",
                    [f"tea/3/{topk.memory_key(memory.id)}"],
                )
            assert _tie_order(after, 20) == before[text], text
        assert "entries_fts_keys" in " ".join(str(p[0]) for p in plan)
        with store.read() as r:  # neighbour lookups read the conversation index alone
            assert r.neighbours(Scope.of(memory.id), ids[::97], EntryFilter(), 2) == turns
            r.conn.execute("SET LOCAL enable_seqscan = off")
            plan = r.conn.execute("EXPLAIN " + pg_near._NEAR, [ids[:5], [memory.id], 6, 6])
        assert "Index Only Scan using entries_conversation" in " ".join(str(p[0]) for p in plan)
        with store.read() as r:  # the longest document per term, filled in place
            wrong = r.conn.execute(
                "SELECT count(*) FROM fts_terms t WHERE t.max_len <> (SELECT max(e.fts_len) "
                "FROM entries e WHERE e.memory_id = t.memory_id AND e.fts @@ "
                "to_tsquery('simple', quote_literal(t.term)))"
            )
        assert wrong[0][0] == 0
        # rows from before and written since: keyword documents as the analyzer makes them
        # (migration 21), keys as migration 11's key function made them
        later = StoreConformance().seed(store, memory, [(t, unit(1), {}) for t in _AWKWARD])
        with store.read() as r:
            assert r.conn.execute(_KEYS_NOT_AS_BUILT)[0][0] == 0
            rows = r.conn.execute("SELECT content, tsvector_to_array(fts), fts_len FROM entries")
        made = analyze_all([str(c) for c, _, _ in rows])
        assert [(sorted(t), n) for _, t, n in rows] == [
            (sorted(set(d.terms)), d.length) for d in made
        ]
        with pytest.raises(StoreError, match="never changed in place"), store.write() as w:
            w.conn.execute(
                "UPDATE entries SET content = 'Rewritten: naïve ½ e-mail' WHERE message_id = ?",
                [later[0]],
            )
    finally:
        store.close()


_AWKWARD = ["Café-au-lait, NAÏVE ½ e-mail@x.com", "!!!", "ｆｕｌｌ width ﬁ ligature", "a a a b"]
# What migration 11's keys computed, with migration 29's person key, against what each row's
# keys are.
_KEYS_NOT_AS_BUILT = """
SELECT count(*) FROM entries e
WHERE recallery_fts_keys(e.memory_id, e.user_id, e.fts, e.fts_len) IS DISTINCT FROM (
        SELECT CASE WHEN e.fts = ''::tsvector THEN e.fts ELSE array_to_tsvector(ARRAY(
            SELECT u || x.suffix FROM unnest(tsvector_to_array(e.fts)) u
            UNION ALL SELECT '/' || left(md5(coalesce(e.user_id, '')), 8) || '/'
                             || left(md5(e.memory_id), 8))) END
        FROM (SELECT '/' || recallery_fts_tier(e.fts_len) || '/' || left(md5(e.memory_id), 8)
              AS suffix) x)
"""


@pytest.fixture
def statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every statement text the PostgreSQL store executes from here on, in order."""
    seen: list[str] = []
    execute = PgConn.execute

    def recorded(self: PgConn, sql: str, params: Sequence[object] = ()) -> list[Row]:
        seen.append(sql)
        return execute(self, sql, params)

    monkeypatch.setattr(PgConn, "execute", recorded)
    return seen


def test_id_lists_are_one_array_parameter_and_still_filter(
    postgres_store: PostgresStore, statements: list[str]
) -> None:
    """A search's filter check and row fetch name their ids as one array: the same statement
    text for 3 ids or 300 (parsed and planned as one), and the filter still holds."""
    mine, other = make_memory(), make_memory(tenant="tenant-b")
    with postgres_store.write() as w:
        w.insert_memory(mine)
        w.insert_memory(other)
        ids = w.insert_entries(
            [new_entry(mine, f"note {i}") for i in range(300)], np.stack([unit(1)] * 300), T0
        )
        (foreign,) = w.insert_entries([new_entry(other, "theirs")], np.stack([unit(1)]), T0)
        w.update_entries(ids[:7], {"status": 0})
    statements.clear()
    f = EntryFilter.retrieval(valid_on=T0)
    scope = Scope.of(mine.id)
    with postgres_store.read() as r:
        few, many = [*ids[:3], foreign], [*ids, foreign]
        assert r.passing(scope, f, few) == set() and r.passing(scope, f, many) == set(ids[7:])
        assert set(r.get_entries(scope, few)) == set(ids[:3])
        assert set(r.get_entries(scope, many)) == set(ids)
    check_few, check_many, fetch_few, fetch_many = statements
    assert check_few == check_many and "= ANY(" in check_few
    assert fetch_few == fetch_many and "= ANY(" in fetch_few


def test_the_table_statistics_are_read_once_a_while_not_every_search(
    postgres_store: PostgresStore, monkeypatch: pytest.MonkeyPatch, statements: list[str]
) -> None:
    monkeypatch.setattr(topk, "SCORE_ALL_BELOW", 0)  # plan rounds even on this small corpus
    monkeypatch.setattr(estimates, "_KEPT", {})
    memory = make_memory()
    StoreConformance().seed(postgres_store, memory, [(t, unit(1), {}) for t in corpus(400)])
    with postgres_store.write() as w:
        w.conn.execute("ANALYZE entries")
    scope = Scope.of(memory.id)

    def searched_twice() -> tuple[int, list[list[tuple[int, float]]]]:
        statements.clear()
        found = []
        for text in TOPK_QUERIES[:2]:
            with postgres_store.read() as r:
                found.append(search.keyword_search(r.conn, scope, text, EntryFilter(), 10))
        return sum(sql == estimates.STATISTICS for sql in statements), found

    reads, kept = searched_twice()
    assert reads == 1 and all(kept)  # the second search reused what the first one read
    monkeypatch.setattr(estimates, "TTL_S", 0.0)
    reads, fresh = searched_twice()
    assert reads == 2 and fresh == kept  # read each time once it is stale, the same results


def test_statistics_of_a_table_never_analysed_are_read_again_until_it_is(
    postgres_store: PostgresStore, monkeypatch: pytest.MonkeyPatch, statements: list[str]
) -> None:
    """What a freshly loaded table's statistics say (nothing) is not kept for a minute: the
    first analysis aims the next search's rounds."""
    monkeypatch.setattr(estimates, "_KEPT", {})
    real_parse = estimates.parse
    analysed = [False]

    def parse(rows: list[Row]) -> estimates.TableStatistics:
        if not analysed[0]:
            return real_parse([(None, None, None, None, None, None, -1.0)])  # never analysed
        return real_parse(rows)

    monkeypatch.setattr(estimates, "parse", parse)
    memory = make_memory()
    StoreConformance().seed(postgres_store, memory, [(t, unit(1), {}) for t in corpus(50)])
    statements.clear()
    for _ in range(2):
        with postgres_store.read() as r:
            assert estimates.table_statistics(r.conn).tier_shares is None
    assert statements.count(estimates.STATISTICS) == 2  # not kept: read by each search
    with postgres_store.write() as w:
        w.conn.execute("ANALYZE entries")
    analysed[0] = True
    for _ in range(2):
        with postgres_store.read() as r:
            assert estimates.table_statistics(r.conn).tier_shares is not None
    assert statements.count(estimates.STATISTICS) == 3  # analysed: read once, then kept


def test_a_filtered_search_aims_its_first_round_at_what_the_filter_passes(
    postgres_store: PostgresStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One user in ten: the table's statistics say so, and the first round aims at ten times
    the documents, so the search needs fewer rounds, with the same results."""
    monkeypatch.setattr(topk, "SCORE_ALL_BELOW", 0)  # plan rounds even on this small corpus
    monkeypatch.setattr(estimates, "_KEPT", {})
    memory = make_memory()
    texts = corpus(2000)
    users = [{"user_id": f"u{i % 10}"} for i in range(len(texts))]
    rows = [(t, unit(1), u) for t, u in zip(texts, users, strict=True)]
    StoreConformance().seed(postgres_store, memory, rows)
    with postgres_store.write() as w:
        w.conn.execute("ANALYZE entries")
    scope, f = Scope.of(memory.id), EntryFilter.retrieval(valid_on=T0, user_id="u3")
    with postgres_store.read() as r:
        assert estimates.table_statistics(r.conn).aim(f, 2000) == pytest.approx(10.0, rel=0.05)
    rounds = [0]
    real_round = search._round

    def counted(*args: object, **kwargs: object) -> object:
        rounds[0] += 1
        return real_round(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(search, "_round", counted)

    def searched() -> tuple[int, list[list[tuple[int, float]]]]:
        rounds[0], found = 0, []
        for text in TOPK_QUERIES:
            with postgres_store.read() as r:
                found.append(search.keyword_search(r.conn, scope, text, f, 20))
        return rounds[0], found

    aimed, found = searched()
    monkeypatch.setattr(estimates, "MAX_AIM", 1.0)  # as if the filter passed everything
    unaimed, same = searched()
    assert found == same == [_every_match(postgres_store, scope, t, f, 20) for t in TOPK_QUERIES]
    assert all(len(ids) == 20 for ids in found)
    assert aimed < unaimed

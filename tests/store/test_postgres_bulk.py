"""Bulk writes on PostgreSQL: keyword documents and term counts computed on a second connection
are the ones the server computes for rows itself, a write without a free connection leaves
that to the server, and a failing side connection fails the write and leaves nothing behind."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import psycopg
import pytest

from recallery.errors import StoreError
from recallery.models import Scope
from recallery.store.filters import EntryFilter
from recallery.store.postgres import PostgresStore, bulk
from recallery.testing.bm25 import corpus
from recallery.testing.conformance import T0, StoreConformance, make_memory, new_entry, unit

pytestmark = pytest.mark.postgres

#: Texts the tokeniser treats differently: accents, full-width forms, e-mails, hyphens, digits,
#: a word over and over, nothing at all.
ODD_TEXTS = [
    "Café déjà vu — naïve résumé",
    "ＦＵＬＬ width ｔｅｘｔ",
    "mail me: someone@example.org, or http://example.org/a-b?c=d",
    "state-of-the-art v1.2.3 3.14 1e10 42nd",
    "tea " * 300,
    "",
    "   ",
    "日本語のテキスト and Ελληνικά",
]
QUERIES = ("tea", "cafe resume", "example org", "art", "hiking mountains river", "日本語のテキスト")


@pytest.fixture
def sides(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The number of texts each bulk write had tokenised on a second connection. A busy
    machine can take longer than a write waits for the pool to open one: these tests are
    about what the side work counts, so a write here waits as long as that takes."""
    monkeypatch.setattr(bulk, "SIDE_WAIT_S", 30.0)
    seen: list[int] = []
    real = bulk.SideWork.__init__

    def counted(self: bulk.SideWork, raw: psycopg.Connection, rows: list[bulk.Text]) -> None:
        seen.append(len(rows))
        real(self, raw, rows)

    monkeypatch.setattr(bulk.SideWork, "__init__", counted)
    yield seen


def _texts(n: int) -> list[str]:
    return [*ODD_TEXTS, *corpus(n - len(ODD_TEXTS), seed=5)]


def _documents_are_the_servers(dsn: str, memory_id: str) -> tuple[int, int]:
    """(rows, rows whose document and length are what the server computes from the text)."""
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT count(*), count(*) FILTER (WHERE fts = recallery_fts_doc(content) "
            "AND fts_len = recallery_fts_len(fts)) FROM entries WHERE memory_id = %s",
            [memory_id],
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


def _statistics(dsn: str, memory_id: str) -> tuple[list[tuple[object, ...]], ...]:
    """A memory's BM25 statistics: its document count and tokens, and every term's row."""
    with psycopg.connect(dsn) as conn:
        docs = conn.execute(
            "SELECT docs, tokens FROM fts_docs WHERE memory_id = %s", [memory_id]
        ).fetchall()
        terms = conn.execute(
            "SELECT term, df, max_tf, min_len, max_len FROM fts_terms WHERE memory_id = %s "
            "ORDER BY term",
            [memory_id],
        ).fetchall()
    return docs, terms


def _ranked(
    store: PostgresStore, memory_id: str, ids: list[int]
) -> dict[str, list[tuple[int, float]]]:
    """Each query's keyword hits as (place in the seed, score)."""
    place = {i: n for n, i in enumerate(ids)}
    with store.read() as r:
        return {
            q: [
                (place[i], round(s, 9))
                for i, s in r.keyword_candidates(Scope.of(memory_id), q, EntryFilter(), 50)
            ]
            for q in QUERIES
        }


def test_a_bulk_write_brings_the_documents_the_server_computes(
    postgres_store: PostgresStore, postgres_dsn: str, sides: list[int]
) -> None:
    texts = _texts(2 * bulk.CHUNK + 37)
    bulk_memory, small_memory = make_memory(), make_memory()
    seeded = StoreConformance().seed(postgres_store, bulk_memory, [(t, unit(1), {}) for t in texts])
    assert sides == [len(texts)]
    written: list[int] = []
    for start in range(0, len(texts), bulk.CHUNK):  # a chunk a write: tokenised in the server
        chunk = texts[start : start + bulk.CHUNK]
        written += StoreConformance().seed(
            postgres_store, small_memory, [(t, unit(1), {}) for t in chunk]
        )
    assert sides == [len(texts)]
    assert _documents_are_the_servers(postgres_dsn, bulk_memory.id) == (len(texts), len(texts))
    docs, terms = _statistics(postgres_dsn, bulk_memory.id)
    assert (docs, terms) == _statistics(postgres_dsn, small_memory.id)
    assert docs[0][0] == len(texts) and len(terms) > 50
    assert _ranked(postgres_store, bulk_memory.id, seeded) == _ranked(
        postgres_store, small_memory.id, written
    )
    assert all(_ranked(postgres_store, bulk_memory.id, seeded).values())


def test_a_bulk_write_over_several_memories_counts_each_memorys_terms(
    postgres_store: PostgresStore, postgres_dsn: str, sides: list[int]
) -> None:
    memories = [make_memory() for _ in range(3)]
    alone = [make_memory() for _ in memories]
    texts = _texts(3 * bulk.CHUNK)
    with postgres_store.write() as w:
        for m in (*memories, *alone):
            w.insert_memory(m)
        entries = [new_entry(memories[n % 3], t) for n, t in enumerate(texts)]
        w.insert_entries(entries, np.stack([unit(1)] * len(texts)), T0)
    assert sides == [len(texts)]
    for n, m in enumerate(alone):  # each memory's share, written in the server's way
        StoreConformance().seed(postgres_store, m, [(t, unit(1), {}) for t in texts[n::3]][:999])
        StoreConformance().seed(postgres_store, m, [(t, unit(1), {}) for t in texts[n::3]][999:])
    assert sides == [len(texts)]
    for m, a in zip(memories, alone, strict=True):
        assert _statistics(postgres_dsn, m.id) == _statistics(postgres_dsn, a.id)
        assert _documents_are_the_servers(postgres_dsn, m.id) == (bulk.CHUNK, bulk.CHUNK)


def test_a_changed_text_is_tokenised_again(
    postgres_store: PostgresStore, postgres_dsn: str, sides: list[int]
) -> None:
    memory = make_memory()
    ids = StoreConformance().seed(
        postgres_store, memory, [(t, unit(1), {}) for t in _texts(bulk.CHUNK + 1)]
    )
    assert sides
    with postgres_store.write() as w:
        w.update_entries(ids[:1], {"content": "an otter by the riverbank"})
    assert _documents_are_the_servers(postgres_dsn, memory.id) == (len(ids), len(ids))
    with postgres_store.read() as r:
        hits = r.keyword_candidates(Scope.of(memory.id), "otter", EntryFilter(), 5)
    assert [i for i, _ in hits] == ids[:1]


def test_without_a_free_connection_the_server_tokenises(
    postgres_dsn: str, sides: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    from recallery.testing.postgres import truncate_all

    monkeypatch.setattr(bulk, "SIDE_WAIT_S", 0.05)  # the pool's one connection is the writer's
    truncate_all(postgres_dsn)
    store = PostgresStore(postgres_dsn, pool_size=1)
    try:
        memory = make_memory()
        texts = _texts(bulk.CHUNK + 10)
        StoreConformance().seed(store, memory, [(t, unit(1), {}) for t in texts])
        assert sides == []
        assert _documents_are_the_servers(postgres_dsn, memory.id) == (len(texts), len(texts))
    finally:
        store.close()


def test_a_failing_side_connection_fails_the_write_and_leaves_nothing(
    postgres_store: PostgresStore, postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = make_memory()
    kept = StoreConformance().seed(postgres_store, memory, [("tea with milk", unit(1), {})])
    monkeypatch.setattr(bulk, "_TOKENISE", "SELECT no_such_function(%s::text[])")
    with pytest.raises(StoreError, match="tokenising a bulk write"):
        StoreConformance().seed(
            postgres_store, memory, [(t, unit(1), {}) for t in _texts(bulk.CHUNK * 3)]
        )
    monkeypatch.undo()
    assert _documents_are_the_servers(postgres_dsn, memory.id) == (1, 1)
    with postgres_store.read() as r:
        assert r.memory(memory.id).entry_count == 1  # type: ignore[union-attr]
    more = StoreConformance().seed(  # both connections came back to the pool, and work
        postgres_store, memory, [(t, unit(1), {}) for t in _texts(bulk.CHUNK + 1)]
    )
    assert len(more) == bulk.CHUNK + 1
    assert _documents_are_the_servers(postgres_dsn, memory.id) == (len(more) + 1, len(more) + 1)
    assert kept[0] not in more
    with psycopg.connect(postgres_dsn) as conn:  # the failed write's counts went with it
        docs = conn.execute("SELECT docs FROM fts_docs WHERE memory_id = %s", [memory.id])
        assert docs.fetchall() == [(len(more) + 1,)]


def _recounted(dsn: str, memory_id: str) -> tuple[list[tuple[object, ...]], ...]:
    """The memory's BM25 statistics counted afresh from its entries' documents."""
    with psycopg.connect(dsn) as conn:
        docs = conn.execute(
            "SELECT count(*), sum(fts_len) FROM entries WHERE memory_id = %s", [memory_id]
        ).fetchall()
        terms = conn.execute(
            "SELECT u.lexeme, count(*), max(cardinality(u.positions)), min(e.fts_len), "
            "max(e.fts_len) FROM entries e CROSS JOIN LATERAL unnest(e.fts) u "
            "WHERE e.memory_id = %s GROUP BY 1 ORDER BY 1",
            [memory_id],
        ).fetchall()
    return docs, terms


def test_bulk_and_single_writes_beside_each_other_keep_the_counts_exact(
    postgres_store: PostgresStore, postgres_dsn: str, sides: list[int]
) -> None:
    memory = make_memory()
    StoreConformance().seed(postgres_store, memory, [("tea with milk", unit(1), {})])

    def bulk_writes() -> None:
        for n in range(3):
            texts = corpus(bulk.CHUNK * 2, seed=20 + n)
            StoreConformance().seed(postgres_store, memory, [(t, unit(1), {}) for t in texts])

    def single_writes() -> None:
        for text in corpus(150, seed=40):
            StoreConformance().seed(postgres_store, memory, [(text, unit(1), {})])

    with ThreadPoolExecutor(2) as pool:
        running = [pool.submit(bulk_writes), pool.submit(single_writes)]
    for writes in running:
        writes.result()  # a failed write (a deadlock among them) raises here
    assert len(sides) == 3
    docs, terms = _statistics(postgres_dsn, memory.id)
    assert (docs, terms) == _recounted(postgres_dsn, memory.id)
    assert docs[0][0] == 1 + 3 * 2 * bulk.CHUNK + 150


def test_a_bulk_write_of_texts_without_words_counts_documents_only(
    postgres_store: PostgresStore, postgres_dsn: str, sides: list[int]
) -> None:
    memory = make_memory()
    texts = ["", "   ", "—!?", "..."] * (bulk.CHUNK // 4 + 1)
    StoreConformance().seed(postgres_store, memory, [(t, unit(1), {}) for t in texts])
    assert sides == [len(texts)]
    assert _statistics(postgres_dsn, memory.id) == ([(len(texts), 0)], [])
    assert _recounted(postgres_dsn, memory.id) == ([(len(texts), 0)], [])

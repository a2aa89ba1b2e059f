"""Bulk writes on PostgreSQL: every row brings the keyword document and length the analyzer
makes of its text, one large write counts the same terms as the same texts written in small
ones, and a text is never changed in place."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import psycopg
import pytest

from recallery.errors import StoreError
from recallery.models import Scope
from recallery.store.filters import EntryFilter
from recallery.store.postgres import PostgresStore
from recallery.testing.bm25 import corpus
from recallery.testing.conformance import T0, StoreConformance, make_memory, new_entry, unit
from recallery.text.analyzer import analyze_all

pytestmark = pytest.mark.postgres
#: Rows of the small writes a large one is compared with.
CHUNK = 1_000

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


def _texts(n: int) -> list[str]:
    return [*ODD_TEXTS, *corpus(n - len(ODD_TEXTS), seed=5)]


def _documents_are_the_analyzers(dsn: str, memory_id: str) -> tuple[int, int]:
    """(rows, rows whose document and length are what the analyzer makes of the text)."""
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT content, tsvector_to_array(fts), fts_len FROM entries WHERE memory_id = %s",
            [memory_id],
        ).fetchall()
    made = analyze_all([str(r[0]) for r in rows])
    same = sum(
        sorted(r[1]) == sorted(set(d.terms)) and r[2] == d.length
        for r, d in zip(rows, made, strict=True)
    )
    return len(rows), same


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


def test_a_bulk_write_brings_the_documents_the_analyzer_makes(
    postgres_store: PostgresStore, postgres_dsn: str
) -> None:
    texts = _texts(2 * CHUNK + 37)
    bulk_memory, small_memory = make_memory(), make_memory()
    seeded = StoreConformance().seed(postgres_store, bulk_memory, [(t, unit(1), {}) for t in texts])
    written: list[int] = []
    for start in range(0, len(texts), CHUNK):  # a chunk a write: tokenised in the server
        chunk = texts[start : start + CHUNK]
        written += StoreConformance().seed(
            postgres_store, small_memory, [(t, unit(1), {}) for t in chunk]
        )
    assert _documents_are_the_analyzers(postgres_dsn, bulk_memory.id) == (len(texts), len(texts))
    docs, terms = _statistics(postgres_dsn, bulk_memory.id)
    assert (docs, terms) == _statistics(postgres_dsn, small_memory.id)
    assert docs[0][0] == len(texts) and len(terms) > 50
    assert _ranked(postgres_store, bulk_memory.id, seeded) == _ranked(
        postgres_store, small_memory.id, written
    )
    assert all(_ranked(postgres_store, bulk_memory.id, seeded).values())


def test_a_bulk_write_over_several_memories_counts_each_memorys_terms(
    postgres_store: PostgresStore, postgres_dsn: str
) -> None:
    memories = [make_memory() for _ in range(3)]
    alone = [make_memory() for _ in memories]
    texts = _texts(3 * CHUNK)
    with postgres_store.write() as w:
        for m in (*memories, *alone):
            w.insert_memory(m)
        entries = [new_entry(memories[n % 3], t) for n, t in enumerate(texts)]
        w.insert_entries(entries, np.stack([unit(1)] * len(texts)), T0)
    for n, m in enumerate(alone):  # each memory's share, written in the server's way
        StoreConformance().seed(postgres_store, m, [(t, unit(1), {}) for t in texts[n::3]][:999])
        StoreConformance().seed(postgres_store, m, [(t, unit(1), {}) for t in texts[n::3]][999:])
    for m, a in zip(memories, alone, strict=True):
        assert _statistics(postgres_dsn, m.id) == _statistics(postgres_dsn, a.id)
        assert _documents_are_the_analyzers(postgres_dsn, m.id) == (CHUNK, CHUNK)


def test_a_text_is_never_changed_in_place(postgres_store: PostgresStore, postgres_dsn: str) -> None:
    memory = make_memory()
    ids = StoreConformance().seed(
        postgres_store, memory, [(t, unit(1), {}) for t in _texts(CHUNK + 1)]
    )
    with pytest.raises(StoreError, match="never changed in place"), postgres_store.write() as w:
        w.update_entries(ids[:1], {"content": "an otter by the riverbank"})
    assert _documents_are_the_analyzers(postgres_dsn, memory.id) == (len(ids), len(ids))
    with postgres_store.read() as r:
        assert r.keyword_candidates(Scope.of(memory.id), "otter", EntryFilter(), 5) == []


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
    postgres_store: PostgresStore, postgres_dsn: str
) -> None:
    memory = make_memory()
    StoreConformance().seed(postgres_store, memory, [("tea with milk", unit(1), {})])

    def bulk_writes() -> None:
        for n in range(3):
            texts = corpus(CHUNK * 2, seed=20 + n)
            StoreConformance().seed(postgres_store, memory, [(t, unit(1), {}) for t in texts])

    def single_writes() -> None:
        for text in corpus(150, seed=40):
            StoreConformance().seed(postgres_store, memory, [(text, unit(1), {})])

    with ThreadPoolExecutor(2) as pool:
        running = [pool.submit(bulk_writes), pool.submit(single_writes)]
    for writes in running:
        writes.result()  # a failed write (a deadlock among them) raises here
    docs, terms = _statistics(postgres_dsn, memory.id)
    assert (docs, terms) == _recounted(postgres_dsn, memory.id)
    assert docs[0][0] == 1 + 3 * 2 * CHUNK + 150


def test_a_bulk_write_of_texts_without_words_counts_documents_only(
    postgres_store: PostgresStore, postgres_dsn: str
) -> None:
    memory = make_memory()
    texts = ["", "   ", "—!?", "..."] * (CHUNK // 4 + 1)
    StoreConformance().seed(postgres_store, memory, [(t, unit(1), {}) for t in texts])
    assert _statistics(postgres_dsn, memory.id) == ([(len(texts), 0)], [])
    assert _recounted(postgres_dsn, memory.id) == ([(len(texts), 0)], [])

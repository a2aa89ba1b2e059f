"""Bulk writes on PostgreSQL: entries and audit events in one ``COPY`` each, the entries'
keyword work done on a second connection, a chunk ahead of the COPY.

A bulk load runs in one server backend, on one core: its rows' index upkeep, the tokenising
of their text (``recallery_fts_doc`` and ``recallery_fts_len``) and, once the statement ends,
the counting of their terms for ``fts_terms``; the last two took about two fifths of the
backend's time a row. So while the writing connection copies one chunk of rows, a pooled
connection tokenises the next chunk and counts its terms with the server's own functions, on
the other core, and the client counts the documents and their lengths. The COPY brings the
documents along, which the row trigger keeps (migration 14), and the writer adds the term and
document counts, its transaction having told the statement trigger that it brings them. The
values are the server's own, not a copy of its tokeniser, so they are the ones the triggers
would compute. Only a connection free now is taken: without one the server does all of it as
before.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress

import psycopg
from psycopg.adapt import Dumper
from psycopg.postgres import types
from psycopg.pq import Format
from psycopg_pool import ConnectionPool, PoolTimeout

from recallery.errors import StoreError
from recallery.store.backend import ENTRY_INSERT_COLUMNS, WithIds
from recallery.store.postgres.conn import PgConn
from recallery.store.rows import AUDIT_WRITTEN
from recallery.store.sql import Row

#: Audit events from which a batch is copied rather than inserted.
COPY_FROM = 50
#: Where an entry row's tenant, memory and text are (its values follow ``ENTRY_INSERT_COLUMNS``).
_TENANT, _MEMORY, _CONTENT = (
    ENTRY_INSERT_COLUMNS.index(c) for c in ("tenant_id", "memory_id", "content")
)
#: Column types of a binary COPY into entries.
_ENTRY_TYPES = {
    "message_id": "int8",
    "embedding": "vector",
    "valid_at": "float8",
    "recorded_at": "float8",
    "source_id": "int8",
    "invalid_at": "float8",
    "supersedes": "int8",
    "status": "int4",
    "use_count": "int4",
    "size_bytes": "int4",
    "fts": "tsvector",
    "fts_len": "int4",
} | {c: "text" for c in ("memory_id", "tenant_id", "message_type", "content", "user_id",
                        "agent_id", "session_id", "trust", "origin")}  # fmt: skip


#: Rows a tokenising query takes (the COPY waits for the first chunk only).
CHUNK = 1_000
#: How long a bulk write (a tenth of a second or more) waits for the second connection, which
#: a pool may have to open, before leaving the work to the server.
SIDE_WAIT_S = 0.05
#: A document and its length (``fts``, ``fts_len``); the document in binary.
Document = tuple[bytes, int]
#: A row to write: its tenant, memory and text.
Text = tuple[str, str, str]
#: The side transaction's own table of each chunk's term counts (dropped at its end).
_COUNTED = (
    "CREATE TEMP TABLE recallery_counted (m int4, term text, df int8, max_tf int4, "
    "min_len int4, max_len int4) ON COMMIT DROP"
)
#: A chunk's documents and lengths in order; its counts of each (memory, term) kept aside:
#: documents, greatest frequency, shortest and longest document, as the statement trigger
#: counts an insert's. Each document is unnested once, for its length (what
#: ``recallery_fts_len`` sums, whose subquery per row cost about a fifth of this statement)
#: and its counts alike.
_TOKENISE = """
WITH d AS MATERIALIZED (
    SELECT u.n, u.m, recallery_fts_doc(u.t) AS doc
    FROM unnest(%s::text[], %s::int4[]) WITH ORDINALITY AS u (t, m, n)
), x AS MATERIALIZED (
    SELECT d.n, d.m, x.lexeme, cardinality(x.positions) AS tf
    FROM d CROSS JOIN LATERAL unnest(d.doc) x
), l AS MATERIALIZED (SELECT n, sum(tf)::int4 AS len FROM x GROUP BY n),
counted AS (
    INSERT INTO pg_temp.recallery_counted
    SELECT x.m, x.lexeme, count(*), max(x.tf), min(l.len), max(l.len)
    FROM x JOIN l USING (n) GROUP BY x.m, x.lexeme
)
SELECT d.doc, coalesce(l.len, 0) FROM d LEFT JOIN l USING (n) ORDER BY d.n
"""
#: Every chunk's counts added up, as the rows of ``fts_terms`` they add to, in binary: the
#: writer copies them into a table of its own as they came (as Python lists, parsed and sent
#: again, they cost the client about 15 us a row: 115,000 rows in a 10,000-row write over
#: a thousand memories).
_TOTALS = """
COPY (SELECT k.tenant, k.memory, s.term, s.df, s.max_tf, s.min_len, s.max_len
      FROM (SELECT m, term, sum(df)::int8 AS df, max(max_tf) AS max_tf,
                   min(min_len) AS min_len, max(max_len) AS max_len
            FROM pg_temp.recallery_counted GROUP BY m, term) s
      JOIN unnest(%s::text[], %s::text[]) WITH ORDINALITY AS k (tenant, memory, n)
        ON k.n = s.m + 1) TO STDOUT (FORMAT BINARY)
"""
#: The writer's table of the brought totals (dropped once added).
_BROUGHT = (
    "CREATE TEMP TABLE recallery_brought (tenant_id text, memory_id text, term text, df int8, "
    "max_tf int4, min_len int4, max_len int4) ON COMMIT DROP"
)
_COUNTS_BROUGHT = "SELECT set_config('recallery.counts_brought', ?, true)"
#: The statement trigger's own upsert of ``fts_terms``, over the brought counts, in its order.
_ADD_TERMS = """
INSERT INTO fts_terms AS t (tenant_id, memory_id, term, df, max_tf, min_len, max_len)
    SELECT * FROM pg_temp.recallery_brought ORDER BY 1, 2, 3
ON CONFLICT (tenant_id, memory_id, term) DO UPDATE
    SET df = t.df + excluded.df, max_tf = greatest(t.max_tf, excluded.max_tf),
        min_len = least(t.min_len, excluded.min_len),
        max_len = greatest(t.max_len, excluded.max_len)
"""
#: And its upsert of ``fts_docs``, after the terms' as in the trigger (writers lock both in
#: one order).
_ADD_DOCS = """
INSERT INTO fts_docs AS d (tenant_id, memory_id, docs, tokens)
    SELECT * FROM unnest(?::text[], ?::text[], ?::int8[], ?::int8[]) ORDER BY 1, 2
ON CONFLICT (tenant_id, memory_id) DO UPDATE
    SET docs = d.docs + excluded.docs, tokens = d.tokens + excluded.tokens
"""
_PUT_WAIT_S = 0.05


class TsvectorBinaryDumper(Dumper):
    """A ``tsvector`` the server sent in binary, sent back as it came (COPY only)."""

    format = Format.BINARY
    oid = types["tsvector"].oid

    def dump(self, obj: bytes) -> bytes:
        return obj


def register_documents(raw: psycopg.Connection[Row]) -> None:
    """Let a binary COPY take the side connection's documents as they came."""
    raw.adapters.register_dumper(None, TsvectorBinaryDumper)


class SideWork:
    """The documents of ``rows`` in order, then their term counts, computed on ``raw`` by a
    thread at most two chunks ahead of the reader; its failure reaches the reader as a
    :class:`StoreError`."""

    def __init__(self, raw: psycopg.Connection[Row], rows: Sequence[Text]) -> None:
        self._raw = raw
        self._rows = rows
        self._docs: dict[tuple[str, str], list[int]] = {}
        self._results: queue.Queue[list[Row] | BaseException] = queue.Queue(maxsize=2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="recallery-bulk", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        memories = sorted({(tenant, memory) for tenant, memory, _ in self._rows})
        place = {m: i for i, m in enumerate(memories)}
        try:
            self._raw.read_only = False  # a pooled connection may come from a read's work
            with self._raw.transaction(), self._raw.cursor(binary=True) as cur:
                cur.execute(_COUNTED)
                for start in range(0, len(self._rows), CHUNK):
                    chunk = self._rows[start : start + CHUNK]
                    texts = [text for _, _, text in chunk]
                    cur.execute(_TOKENISE, [texts, [place[t, m] for t, m, _ in chunk]])
                    if not self._put(cur.fetchall()):
                        return
                keys = [[t for t, _ in memories], [m for _, m in memories]]
                with cur.copy(_TOTALS, keys) as copy:
                    totals = b"".join(copy)
                self._put([(totals,)])
        except Exception as exc:  # handed to the reader, which raises it
            self._put(exc)

    def _put(self, item: list[Row] | BaseException) -> bool:
        """Queue ``item``; False once the reader has gone."""
        while not self._stop.is_set():
            with suppress(queue.Full):
                self._results.put(item, timeout=_PUT_WAIT_S)
                return True
        return False

    def _next(self) -> list[Row]:
        item = self._results.get()
        if isinstance(item, BaseException):
            raise StoreError(f"postgres: tokenising a bulk write: {item}") from item
        return item

    def __iter__(self) -> Iterator[Document]:
        rows, docs = iter(self._rows), self._docs
        for _ in range(0, len(self._rows), CHUNK):
            for doc, length in self._next():
                tenant, memory, _ = next(rows)
                held = docs.setdefault((tenant, memory), [0, 0])
                held[0] += 1
                held[1] += length
                yield bytes(doc), int(length)

    def add_counts(self, conn: PgConn) -> None:
        """Add the rows' counts to ``fts_terms`` and ``fts_docs``, as the statement trigger
        would have (once every document has been read)."""
        conn.execute(_BROUGHT)
        conn.copy_binary("pg_temp.recallery_brought", self._next()[0][0])
        conn.execute(_ADD_TERMS)
        conn.execute("DROP TABLE pg_temp.recallery_brought")
        keys = sorted(self._docs)
        counts = [self._docs[k] for k in keys]
        conn.execute(
            _ADD_DOCS,
            [[t for t, _ in keys], [m for _, m in keys], [d for d, _ in counts],
             [n for _, n in counts]],
        )  # fmt: skip

    def close(self) -> None:
        self._stop.set()
        self._thread.join()


def copy_entries(
    conn: PgConn,
    pool: ConnectionPool[psycopg.Connection[Row]],
    rows: Sequence[Sequence[object]],
    with_ids: WithIds | None = None,
) -> list[int]:
    """Ids from the sequence first, then one binary ``COPY``: the term statistics trigger
    runs once for the batch, and a 10,000-row import is one statement, not 10,000. The rows'
    keyword documents and term counts come from a second connection when one is free.
    ``with_ids`` runs as soon as the ids are drawn, while that connection tokenises the first
    chunk: the writer would otherwise wait there, and write them after the rows, one core
    idle (an import's audit events: ten 4,000-turn imports, median 9,826 -> 10,390 entries/s)."""
    texts = [(str(r[_TENANT]), str(r[_MEMORY]), str(r[_CONTENT])) for r in rows]
    with side_work(pool, texts) as work:
        drawn = conn.execute(
            "SELECT nextval('entries_message_id_seq') FROM generate_series(1, ?)", [len(rows)]
        )
        ids = sorted(int(r[0]) for r in drawn)
        if with_ids is not None:
            with_ids(ids)
        columns: tuple[str, ...] = ("message_id", *ENTRY_INSERT_COLUMNS)
        numbered = ([i, *r] for i, r in zip(ids, rows, strict=True))
        if work is None:
            conn.copy_rows("entries", columns, numbered, [_ENTRY_TYPES[c] for c in columns])
            return ids
        columns += ("fts", "fts_len")
        brought = ([*r, *d] for r, d in zip(numbered, work, strict=True))
        conn.execute(_COUNTS_BROUGHT, ["on"])  # the statement trigger leaves the counts to us
        conn.copy_rows("entries", columns, brought, [_ENTRY_TYPES[c] for c in columns])
        conn.execute(_COUNTS_BROUGHT, ["off"])
        work.add_counts(conn)
    return ids


def copy_audit(conn: PgConn, rows: Sequence[Sequence[object]]) -> None:
    """Audit events (:data:`~recallery.store.rows.AUDIT_WRITTEN` order) in one text ``COPY``,
    each with its memory's tenant (``''`` for none), as the row trigger would fill it."""
    memory = AUDIT_WRITTEN.index("memory_id")
    named = sorted({str(r[memory]) for r in rows if r[memory] is not None})
    found = conn.execute("SELECT id, tenant_id FROM memories WHERE id = ANY(?)", [named])
    tenants: dict[object, str] = {str(m): str(t) for m, t in found}
    conn.copy_rows(
        "audit", ("tenant_id", *AUDIT_WRITTEN), ([tenants.get(r[memory], ""), *r] for r in rows)
    )


@contextmanager
def side_work(
    pool: ConnectionPool[psycopg.Connection[Row]], rows: Sequence[Text]
) -> Iterator[SideWork | None]:
    """The keyword work of ``rows`` on a second pooled connection; None when the write is
    one chunk or less (nothing to overlap) or no connection is free now."""
    if len(rows) <= CHUNK:
        yield None
        return
    try:
        raw = pool.getconn(timeout=SIDE_WAIT_S)
    except PoolTimeout:
        yield None
        return
    work = SideWork(raw, rows)
    try:
        yield work
    finally:
        work.close()
        pool.putconn(raw)


__all__ = [
    "CHUNK",
    "COPY_FROM",
    "SideWork",
    "copy_audit",
    "copy_entries",
    "register_documents",
    "side_work",
]

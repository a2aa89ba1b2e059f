"""Keyword (BM25) and vector candidate queries of the PostgreSQL store.

BM25 here is FTS5's: ``idf = ln((N - n + 0.5) / (n + 0.5))`` (at least 1e-6), term frequency
saturated with k1 = 1.2 and length-normalised with b = 0.75 against the average document
length, summed over the query's terms (a term twice in the query counts twice, as FTS5 does).
One difference on purpose: N, n and the average length are those of the memories searched,
not of the whole database, so one tenant's data never shifts another's ranking.

Vectors: entries of the query's dimension are ordered by cosine distance. Scopes of at most
:data:`EXACT_MAX_ROWS` entries (counted from ``fts_docs``) are searched exactly. Larger ones,
in a dimension with an HNSW index (``entries_hnsw_<dim>``, partial on ``vector_dims``), let
the planner choose the index, with pgvector's iterative scan so filtered queries still fill
``limit``; when the index gives fewer rows than asked, the exact query runs instead, so a
selective filter never loses rows.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from memstrata.models import Scope
from memstrata.store.filters import EntryFilter, where_clause
from memstrata.store.sql import Conn, marks
from memstrata.store.text import keyword_terms

K1 = 1.2
B = 0.75
#: The HNSW candidate list: twice the rows asked for, at least this (recall@50 of 0.99 at
#: ef_search 50 and 1.0 at 100 on 100k topic-clustered 384-d vectors, ~1 ms).
EF_SEARCH_MIN = 40
EF_SEARCH_MAX = 1000
#: Scopes with at most this many entries are searched exactly (a few milliseconds).
EXACT_MAX_ROWS = 5000


_BM25 = f"""
WITH q AS (
    SELECT t.ord, l.lexeme
    FROM unnest(?::text[]) WITH ORDINALITY AS t(word, ord)
    CROSS JOIN LATERAL unnest(memstrata_fts_doc(t.word)) AS l
), s AS (
    SELECT coalesce(sum(d.docs), 0)::float8 AS n,
           coalesce(sum(d.tokens), 0)::float8 / greatest(coalesce(sum(d.docs), 0), 1) AS avgdl
    FROM fts_docs d WHERE d.memory_id IN ({{scope}})
), w AS (
    SELECT q.ord, q.lexeme,
           greatest(ln((s.n - coalesce(sum(t.df), 0) + 0.5) / (coalesce(sum(t.df), 0) + 0.5)),
                    1e-6) AS idf
    FROM q CROSS JOIN s
    LEFT JOIN fts_terms t ON t.term = q.lexeme AND t.memory_id IN ({{scope}})
    GROUP BY q.ord, q.lexeme, s.n
), l AS (
    SELECT array_agg(DISTINCT lexeme) AS lexemes,
           string_agg(
               '''' || replace(replace(lexeme, '\\', '\\\\'), '''', '\\''') || '''', ' | '
           )::tsquery AS query
    FROM q
)
-- Only the query's lexemes of a matching entry are unnested: setweight marks them and
-- ts_filter keeps the marked ones (both in C); |D| is stored with the row (fts_len).
SELECT e.message_id,
       sum(w.idf * cardinality(u.positions) * {K1 + 1}
           / (cardinality(u.positions) + {K1} * ({1 - B} + {B} * e.fts_len / s.avgdl))) AS score
FROM l CROSS JOIN s
JOIN entries e ON e.fts @@ l.query
CROSS JOIN LATERAL unnest(ts_filter(setweight(e.fts, 'A', l.lexemes), '{{{{a}}}}')) u
JOIN w ON w.lexeme = u.lexeme
WHERE {{where}}
GROUP BY e.message_id
ORDER BY score DESC, e.message_id
LIMIT ?
"""


def keyword_search(
    conn: Conn, scope: Scope, text: str, f: EntryFilter, limit: int
) -> list[tuple[int, float]]:
    """Best BM25 matches of ``text`` as (message_id, score), higher is better."""
    terms = keyword_terms(text)
    if not terms:
        return []
    memories = sorted(scope.memory_ids)
    where, params = where_clause(scope, f)
    sql = _BM25.format(scope=marks(len(memories)), where=where)
    rows = conn.execute(sql, [terms, *memories, *memories, *params, limit])
    return [(int(r[0]), float(r[1])) for r in rows]


def _vector_sql(where: str, dim: int, indexed: bool) -> str:
    # The cast to vector(dim) is what the partial expression index is built on; without it
    # the planner cannot use the index and the ordering is exact.
    column = f"e.embedding::vector({dim})" if indexed else "e.embedding"
    return (
        f"SELECT e.message_id, {column} <=> ? AS distance FROM entries e "
        f"WHERE {where} AND vector_dims(e.embedding) = {dim} ORDER BY distance LIMIT ?"
    )


def vector_search(
    conn: Conn,
    scope: Scope,
    vector: NDArray[np.float32],
    f: EntryFilter,
    limit: int,
    indexed_dims: frozenset[int],
) -> list[tuple[int, float]]:
    """Nearest entries as (message_id, cosine similarity), best first."""
    dim = int(vector.shape[0])
    where, params = where_clause(scope, f)
    query = np.ascontiguousarray(vector, dtype=np.float32)
    rows: list[tuple[int, float]] = []
    if dim in indexed_dims and _scope_rows(conn, scope) > EXACT_MAX_ROWS:
        ef = min(max(EF_SEARCH_MIN, 2 * limit), EF_SEARCH_MAX)
        conn.execute("SELECT set_config('hnsw.ef_search', ?, true)", [str(ef)])
        rows = _distances(conn, _vector_sql(where, dim, True), [query, *params, limit])
    if len(rows) < limit:
        rows = _distances(conn, _vector_sql(where, dim, False), [query, *params, limit])
    rows.sort(key=lambda r: (r[1], r[0]))  # iterative scans may return rows slightly unordered
    return [(i, 1.0 - d) for i, d in rows]


def _scope_rows(conn: Conn, scope: Scope) -> int:
    """Entries in the scope's memories, any state (the term statistics keep the count)."""
    memories = sorted(scope.memory_ids)
    rows = conn.execute(
        f"SELECT coalesce(sum(docs), 0) FROM fts_docs WHERE memory_id IN ({marks(len(memories))})",
        memories,
    )
    return int(rows[0][0])


def _distances(conn: Conn, sql: str, params: list[object]) -> list[tuple[int, float]]:
    return [(int(r[0]), float(r[1])) for r in conn.execute(sql, params)]

"""Keyword (BM25) and vector candidate queries of the PostgreSQL store.

BM25 here is FTS5's: ``idf = ln((N - n + 0.5) / (n + 0.5))`` (at least 1e-6), term frequency
saturated with k1 = 1.2 and length-normalised with b = 0.75 against the average document
length, summed over the query's terms (a term twice in the query counts twice, as FTS5 does).
One difference on purpose: N, n and the average length are those of the memories searched,
not of the whole database, so one tenant's data never shifts another's ranking. Equal scores
come newer first, as fusion orders them.

Candidates come from the GIN index ``entries_fts_keys``, whose keys are lexeme, length tier
and memory (``recallery_fts_keys``), so only the memories searched cost anything, however
many other tenants' entries hold the same terms, and one person and memory per row, so a
search for one person's entries reads no other person's matches (migration 29). A query
with few matches scores them all in one statement; otherwise the search runs in rounds
(:mod:`.topk`): bounds per term set and length tier pick which documents could reach the top
k, each of those is checked against its own bound and only the survivors are scored. The
result is the same as scoring every match (a test compares them), usually after one or two
rounds.

Vectors: entries of the query's dimension are ordered by cosine distance. Scopes of at most
:data:`EXACT_MAX_ROWS` entries (counted from ``fts_docs``) are searched exactly. Larger ones,
in a dimension with an HNSW index (``entries_hnsw_<dim>``, partial on ``vector_dims``), let
the planner choose the index, with pgvector's iterative scan so filtered queries still fill
``limit``; when the index gives fewer rows than asked, the exact query runs instead, so a
selective filter never loses rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from recallery.models import Scope
from recallery.store.filters import EntryFilter, where_clause
from recallery.store.postgres import estimates, topk
from recallery.store.postgres import windows as conversation
from recallery.store.postgres.conn import PgConn
from recallery.store.postgres.topk import K1, B, Term
from recallery.store.sql import Conn, marks
from recallery.store.steps import Handover, KeywordStep
from recallery.text.analyzer import query_terms

#: The HNSW candidate list: twice the rows asked for, at least this (recall@50 of 0.99 at
#: ef_search 50 and 1.0 at 100 on 100k topic-clustered 384-d vectors, ~1 ms).
EF_SEARCH_MIN = 40
EF_SEARCH_MAX = 1000
#: Scopes with at most this many entries are searched exactly (a few milliseconds).
EXACT_MAX_ROWS = 5000
#: A bitmap heap scan's memory per matching row, at most (about one page entry each), the
#: matches the default 4 MB holds, and the most a keyword search asks for.
BITMAP_BYTES_PER_ROW = 96
BITMAP_ROWS_IN_DEFAULT = 40_000
BITMAP_MEMORY_MAX_KB = 256 * 1024
#: The identity columns a round checks on the rows the keyword index gives, never through
#: another index (:func:`~recallery.store.filters.where_clause`'s ``heap``): the index's keys
#: hold the memory and the person already, so another index would only add a bitmap to
#: intersect (a person with 28,000 of 100,000 entries: 4.4 ms a round through theirs).
HEAP_CHECKED = ("memory_id", "user_id")

# The keyword transaction's first statement, so it also turns parallel workers off for the
# rounds after it: a round is small, and their start costs more than they share (see
# _bitmap_memory; with the key function priced at what it costs, migration 15, some rounds at
# 1M chose them, 3.8 ms becoming 6.7).
_STATISTICS = """
WITH q AS (
    SELECT t.ord, t.lexeme FROM unnest(?::text[]) WITH ORDINALITY AS t(lexeme, ord)
), s AS (
    SELECT coalesce(sum(d.docs), 0) AS docs, coalesce(sum(d.tokens), 0) AS tokens,
           set_config('max_parallel_workers_per_gather', '0', true) AS serial
    FROM fts_docs d WHERE d.memory_id IN ({scope})
)
SELECT q.lexeme, coalesce(sum(t.df), 0), max(t.max_tf), min(t.min_len), max(t.max_len),
       s.docs, s.tokens, s.serial
FROM q CROSS JOIN s
LEFT JOIN fts_terms t ON t.term = q.lexeme AND t.memory_id IN ({scope})
GROUP BY q.ord, q.lexeme, s.docs, s.tokens, s.serial
"""

# One round: the GIN matches of the clauses with each one's bound, the best of those at or
# above the floor scored exactly, and a last row (no id) with the k-th largest bound. Only the
# query's lexemes of a match are unnested: setweight marks them and ts_filter keeps the marked
# ones (both in C); |D| is stored with the row (fts_len).
_ROUND = f"""
WITH c AS MATERIALIZED (
    SELECT e.message_id, e.fts, e.fts_len, {{bound}} AS bound
    FROM entries e WHERE ({{match}}) AND {{where}}
)
(SELECT c.message_id,
        sum(w.weight * cardinality(u.positions) * {K1 + 1}
            / (cardinality(u.positions) + {K1} * ({1 - B} + {B} * c.fts_len / ?::float8))) AS score
 FROM c
 CROSS JOIN LATERAL unnest(ts_filter(setweight(c.fts, 'A', ?::text[]), '{{{{a}}}}')) u
 JOIN unnest(?::text[], ?::float8[]) AS w(lexeme, weight) ON w.lexeme = u.lexeme
 WHERE c.bound >= ?
 GROUP BY c.message_id
 ORDER BY score DESC, c.message_id DESC
 LIMIT ?)
UNION ALL
(SELECT NULL, c.bound FROM c ORDER BY c.bound DESC OFFSET ? LIMIT 1)
"""
# Each clause (and a clause of common terms, each of its tiers: topk.tsqueries) is its own
# scan of the keyword index (a BitmapOr): GIN checks every posting it reads against the whole
# query, so one query of many clauses cost several times their separate scans.
_MATCH = "recallery_fts_keys(e.memory_id, e.user_id, e.fts, e.fts_len) @@ ?::tsquery"
_TERM_BOUND = (
    "ts_match_vq(e.fts, ?::tsquery)::int * (?::float8 / (?::float8 + ?::float8 * e.fts_len))"
)


@dataclass(frozen=True)
class _Statistics:
    """The query's terms over the memories searched, their document count and mean length."""

    docs: float
    avgdl: float
    terms: list[Term]
    memories: list[str]


def keyword_search(
    conn: Conn, scope: Scope, text: str, f: EntryFilter, limit: int
) -> list[tuple[int, float]]:
    """Best BM25 matches of ``text`` as (message_id, score), higher first, equal scores newer
    first. Exact, without scoring every match when the query has few terms (:mod:`.topk`)."""
    return keyword_and_windows(conn, scope, text, f, limit, 0).keyword


def keyword_and_windows(
    conn: Conn,
    scope: Scope,
    text: str,
    f: EntryFilter,
    limit: int,
    windows: int,
    vector: Handover | None = None,
) -> KeywordStep:
    """:func:`keyword_search` and the best ``windows`` conversation windows that hold one
    of its best :data:`~.windows.SEEDS` matches (:mod:`.windows`), from one keyword search;
    with the query's ``vector`` handed over, the window statement also reads both legs'
    candidates' cosines and lengths (none read without windows or a vector)."""
    words = query_terms(text)
    stats = _statistics(conn, sorted(scope.memory_ids), words) if words else None
    if stats is None:
        return KeywordStep([], [])
    wanted = max(limit, conversation.SEEDS) if windows > 0 else limit
    found = _best_matches(conn, scope, stats, f, wanted)
    if windows <= 0:
        return KeywordStep(found, [])
    seeds = [i for i, _ in found[: conversation.SEEDS]]
    query = vector() if vector is not None else None
    more = [i for i, _ in found[conversation.SEEDS : limit]]
    held, measured = conversation.window_search(
        conn, scope, f, stats.terms, stats.docs, stats.avgdl, seeds, windows, query, more
    )
    return KeywordStep(found[:limit], held, *measured)


def _best_matches(
    conn: Conn, scope: Scope, stats: _Statistics, f: EntryFilter, limit: int
) -> list[tuple[int, float]]:
    if limit <= 0:
        return []
    table = estimates.table_statistics(conn)
    aim = table.aim(f, stats.docs)
    matches = sum(t.df for t in stats.terms)
    every = len(stats.terms) > topk.MAX_PLANNED_TERMS or matches < topk.SCORE_ALL_BELOW
    where, params = where_clause(scope, f, heap=HEAP_CHECKED)
    if every:
        found, _ = _round(conn, stats, None, where, params, limit, f.user_id)
        return _ranked(found, limit)
    planner = topk.Planner(stats.terms, stats.avgdl)
    smallest = min(planner.set_bound(1 << i) for i in range(len(stats.terms)))
    threshold: float | None = planner.first_threshold(stats.docs, limit * aim, table.tier_shares)
    best: dict[int, float] = {}
    while threshold is not None:
        current = planner.plan(threshold)
        found, kth_bound = _round(conn, stats, current, where, params, limit, f.user_id)
        best.update(found)
        ranked = _ranked(best, limit)
        kth = ranked[-1][1] if len(ranked) >= limit else None
        threshold = topk.next_threshold(current, kth, kth_bound, smallest)
    return _ranked(best, limit)


def every_match(
    conn: Conn, scope: Scope, text: str, f: EntryFilter, limit: int
) -> list[tuple[int, float]]:
    """The same best matches, every match scored in one statement: what the rounds must
    equal (tests and benchmarks compare them)."""
    words = query_terms(text)
    stats = _statistics(conn, sorted(scope.memory_ids), words) if words else None
    if stats is None:
        return []
    where, params = where_clause(scope, f)  # the person checked on the rows, not by key
    found, _ = _round(conn, stats, None, where, params, limit)
    return _ranked(found, limit)


def _bitmap_memory(conn: Conn, terms: list[Term], clauses: list[topk.Clause]) -> None:
    """Enough ``work_mem`` (for this transaction) that the bitmap of a round's matches (at
    most its clauses' rarest terms' documents) stays exact: a lossy page is rechecked by
    computing the index expression for each of its rows and each clause (38 s instead of 2 s
    for a 14-term query at 1M entries). Only then: more memory makes the planner choose
    parallel scans, slower for a small round (48 instead of 40 ms p50 at 1M)."""
    matches = sum(min(terms[i].df for i in c) for c, _ in clauses)
    if matches > BITMAP_ROWS_IN_DEFAULT:
        kilobytes = min(max(matches * BITMAP_BYTES_PER_ROW // 1024, 4096), BITMAP_MEMORY_MAX_KB)
        conn.execute("SELECT set_config('work_mem', ?, true)", [f"{kilobytes}kB"])


def _ranked(scores: dict[int, float], limit: int) -> list[tuple[int, float]]:
    return sorted(scores.items(), key=lambda r: (-r[1], -r[0]))[:limit]


def _statistics(conn: Conn, memories: list[str], words: list[str]) -> _Statistics | None:
    """Each lexeme's weight (idf summed over the words giving it), df and bounds; None when
    the memories hold none of them."""
    scope = marks(len(memories))
    rows = conn.execute(_STATISTICS.format(scope=scope), [words, *memories, *memories])
    docs = float(rows[0][5]) if rows else 0.0
    found: dict[str, Term] = {}
    for lexeme, df, max_tf, min_len, max_len, *_ in rows:
        if not df:
            continue
        weight = topk.idf(docs, float(df)) + (found[lexeme].weight if lexeme in found else 0.0)
        found[lexeme] = Term(lexeme, weight, int(df), int(max_tf), int(min_len), int(max_len))
    if not found:
        return None
    avgdl = float(rows[0][6]) / max(docs, 1.0)
    return _Statistics(docs, avgdl, sorted(found.values(), key=lambda t: t.lexeme), memories)


def _round(
    conn: Conn,
    stats: _Statistics,
    current: topk.Round | None,
    where: str,
    params: list[object],
    limit: int,
    user_id: str | None = None,
) -> tuple[dict[int, float], float | None]:
    """Score one round (None: every match), of ``user_id``'s entries only where given; the
    scores found and the k-th largest bound."""
    terms = stats.terms
    if current is None:
        bound, bound_params, floor = "0::float8", [], 0.0
        clauses: list[topk.Clause] = [((i,), topk.term_tiers(t)) for i, t in enumerate(terms)]
    else:
        if not current.clauses:
            return {}, None
        bound = " + ".join([_TERM_BOUND] * len(terms))
        bound_params = [
            v for t in terms for v in (topk.quote(t.lexeme), *topk.bound_terms(t, stats.avgdl))
        ]
        clauses, floor = list(current.clauses), current.floor * (1 - topk.SLACK)
    _bitmap_memory(conn, terms, clauses)
    keys = [topk.memory_key(m) for m in stats.memories]
    person = topk.person_key(user_id) if user_id is not None else None
    queries = [q for c in clauses for q in topk.tsqueries(terms, c, keys, person)]
    lexemes = [t.lexeme for t in terms]
    # Planned for its own values: one generic plan for every memory and query read a small
    # memory's rows by a B-tree instead of its terms' postings (a 1,000-entry memory among
    # 100,000 entries: 4.0 ms instead of 2.2, and 36 after a CLUSTER). The other statements
    # keep their generic plans (planning each execution of all of them cost a million-entry
    # search about 2 ms).
    execute = conn.execute_planned if isinstance(conn, PgConn) else conn.execute
    rows = execute(
        _ROUND.format(bound=bound, match=" OR ".join([_MATCH] * len(queries)), where=where),
        [
            *bound_params,
            *queries,
            *params,
            stats.avgdl,
            lexemes,
            lexemes,
            [t.weight for t in terms],
            floor,
            limit,
            limit - 1,
        ],
    )
    found = {int(r[0]): float(r[1]) for r in rows if r[0] is not None}
    kth_bound = next((float(r[1]) for r in rows if r[0] is None), None)
    return found, kth_bound


def vector_sql(where: str, dim: int, indexed: bool) -> str:
    # The cast to vector(dim) is what the partial expression index is built on; without it
    # the planner cannot use the index and the ordering is exact.
    # The exact query breaks equal distances by id, newer first; the index scan keeps its
    # own order (a second key would hide it from the planner) and is re-sorted after.
    column = f"e.embedding::vector({dim})" if indexed else "e.embedding"
    ties = "" if indexed else ", e.message_id DESC"
    return (
        f"SELECT e.message_id, {column} <=> ? AS distance FROM entries e "
        f"WHERE {where} AND vector_dims(e.embedding) = {dim} ORDER BY distance{ties} LIMIT ?"
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
        conn.execute("SELECT set_config('hnsw.ef_search', ?, true)", [str(ef_search(limit))])
        rows = _distances(conn, vector_sql(where, dim, True), [query, *params, limit])
    if len(rows) < limit:
        rows = _distances(conn, vector_sql(where, dim, False), [query, *params, limit])
    rows.sort(key=lambda r: (r[1], -r[0]))  # iterative scans may return rows slightly unordered
    return [(i, 1.0 - d) for i, d in rows]


def ef_search(limit: int) -> int:
    """The HNSW candidate list for ``limit`` rows."""
    return min(max(EF_SEARCH_MIN, 2 * limit), EF_SEARCH_MAX)


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

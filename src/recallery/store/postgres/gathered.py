"""A search's gather in two statements on PostgreSQL, where every read is a round trip
(:mod:`recallery.store.steps` says what each step holds; :mod:`recallery.store.gather` asks).

Step one, while the keyword legs run beside: the vector leg as :func:`.search.vector_search`
runs it (the scope's size from the term statistics, ``hnsw.ef_search`` set for the index scan,
the exact query where the scope is small, the dimension has no index or the index gave fewer
rows than asked), with the cosines and raw-turn lengths of the candidates the keyword legs did
not read (:class:`~recallery.store.steps.KeywordStep`). ``set_config`` runs in a materialised
CTE that the index scan's LATERAL subquery depends on, so the setting is in place before the
scan's first row; each exact query runs only where its one-time filter says. Its last row sets
the transaction's prepared statements to generic plans for step two: planned for its values
each time (PostgreSQL's ``auto`` never took its generic plan, whose cost the recursive CTE's
estimate inflates), step two spent about 1.8 of its 5.2 ms planning at 100k entries; generic,
it ran in 4.1 ms with the same rows.

Step two, once the ranking's pure ``leaders`` are picked: the leaders' conversations (the
CTEs of :mod:`.near`), then one row for each turn asked about (candidates, leaders, their
conversations' turns) and each newer end of a supersession link (a recursive CTE follows the
latest link of each turn as far as asked): whether the search's filter passes it, its
cosine, length, valid time, the newer end of its link and, for both ends of a link, its
entry's columns.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from recallery.clock import from_epoch
from recallery.models import Scope
from recallery.ownership import person_of
from recallery.store.filters import EntryFilter, where_clause
from recallery.store.postgres.near import NEAR_CTES
from recallery.store.postgres.search import EXACT_MAX_ROWS, ef_search, vector_sql
from recallery.store.postgres.vectors import DISTANCE, cosine_of
from recallery.store.rows import ENTRY_COLUMNS, entry_from_row
from recallery.store.sql import Conn, marks
from recallery.store.steps import FirstStep, SecondStep

# The index scan (where the dimension has one and the scope is large), the exact query
# (where it is not, or the scan gave fewer than asked), then the candidates asked about.
_INDEXED = """
n AS MATERIALIZED (
    SELECT coalesce(sum(d.docs), 0) AS docs FROM fts_docs d WHERE d.memory_id IN ({scope})
), cfg AS MATERIALIZED (
    SELECT set_config('hnsw.ef_search', ?, true) AS ef FROM n WHERE n.docs > {exact}
), vi AS MATERIALIZED (
    SELECT v.message_id, v.distance FROM cfg CROSS JOIN LATERAL ({indexed}) v
), """
_FIRST = """
WITH {indexed}vx AS ({exact})
{from_index}SELECT 0, message_id, distance, NULL::boolean, NULL::integer FROM vx{asked}
UNION ALL
SELECT 2, NULL, NULL, NULL, length(set_config('plan_cache_mode', 'force_generic_plan', true))
"""
# Where cosines or lengths are asked (the keyword legs did not read them beside).
_ASKED = f"""
UNION ALL
SELECT 1, e.message_id, {DISTANCE}, e.embedding IS NOT NULL,
       CASE WHEN e.message_type = 'raw' AND e.message_id = ANY(?::bigint[])
            THEN length(e.content) END
FROM entries e WHERE e.memory_id IN ({{scope}}) AND e.message_id = ANY(?::bigint[])"""

_ENTRY_X = ", ".join(f"x.{c.strip()}" for c in ENTRY_COLUMNS.split(","))
# The latest turn superseding a turn (by valid time, then id), as the reader's
# ``superseding`` picks it.
_LATEST = """
    SELECT s.newer FROM supersessions s JOIN entries n ON n.message_id = s.newer
    WHERE s.older = {turn} ORDER BY n.valid_at DESC, s.newer DESC LIMIT 1"""
_SECOND = f"""
WITH RECURSIVE {NEAR_CTES}, asked AS (
    SELECT unnest(?::bigint[]) AS message_id
    UNION SELECT message_id FROM c
    UNION SELECT message_id FROM near
), chain (older, newer, depth) AS (
    SELECT a.message_id, l.newer, 0
    FROM asked a CROSS JOIN LATERAL ({_LATEST.format(turn="a.message_id")}) l
    WHERE ? > 0
    UNION ALL
    SELECT chain.older, l.newer, chain.depth + 1
    FROM chain CROSS JOIN LATERAL ({_LATEST.format(turn="chain.newer")}) l
    WHERE chain.depth < ?
), fin AS (
    SELECT DISTINCT ON (older) older, newer FROM chain ORDER BY older, depth DESC
), sides AS (
    SELECT centre, array_agg(message_id ORDER BY k) FILTER (WHERE side = 0) AS before,
           array_agg(message_id ORDER BY k) FILTER (WHERE side = 1) AS after
    FROM near GROUP BY centre
), turns AS (
    SELECT message_id, bool_or(asked) AS asked FROM (
        SELECT message_id, true AS asked FROM asked UNION ALL SELECT newer, false FROM fin
    ) u GROUP BY message_id
)
SELECT e.message_id, e.memory_id, ({{where}}) AS passes, e.embedding IS NOT NULL,
       {DISTANCE}, CASE WHEN e.message_type = 'raw' THEN length(e.content) END,
       e.valid_at, fin.newer, c.message_id IS NOT NULL, sides.before, sides.after, t.asked,
       e.user_id, {_ENTRY_X}
FROM turns t JOIN entries e ON e.message_id = t.message_id
LEFT JOIN fin ON fin.older = e.message_id
LEFT JOIN c ON c.message_id = e.message_id
LEFT JOIN sides ON sides.centre = e.message_id
LEFT JOIN entries x ON x.message_id = CASE
    WHEN fin.newer IS NOT NULL OR e.message_id IN (SELECT newer FROM fin) THEN e.message_id END
"""
# (The link ends' entries through a key that is NULL for every other turn: as a join filter
# the same condition was checked after an index probe for each of the ~600 turns asked.)


def first_step(
    conn: Conn,
    scope: Scope,
    vector: NDArray[np.float32],
    f: EntryFilter,
    limit: int,
    indexed_dims: frozenset[int],
    cosine_ids: Sequence[int],
    length_ids: Sequence[int],
) -> FirstStep:
    """The ``limit`` entries of ``scope`` nearest ``vector`` that pass ``f`` (as
    :func:`.search.vector_search` finds them), the cosines of ``cosine_ids`` and the lengths
    of the raw turns among ``length_ids``, in one statement."""
    memories = sorted(scope.memory_ids)
    if not memories:
        return FirstStep([], {}, {})
    dim = int(vector.shape[0])
    query = np.ascontiguousarray(vector, np.float32)
    where, params = where_clause(scope, f)
    indexed, from_index, args = "", "", []
    exact_where = where
    if dim in indexed_dims and limit > 0:
        indexed = _INDEXED.format(
            scope=marks(len(memories)),
            exact=EXACT_MAX_ROWS,
            indexed=vector_sql(f"{where} AND cfg.ef IS NOT NULL", dim, True),
        )
        args = [*memories, str(ef_search(limit)), query, *params, limit]
        exact_where = f"{where} AND (SELECT count(*) FROM vi) < ?"
        from_index = (
            "SELECT 0, message_id, distance, NULL::boolean, NULL::integer FROM vi "
            "WHERE (SELECT count(*) FROM vi) >= ?\nUNION ALL\n"
        )
    exact_args = [query, *params, *([limit] if indexed else []), max(limit, 0)]
    asked = sorted({*cosine_ids, *length_ids})
    sql = _FIRST.format(
        indexed=indexed,
        exact=vector_sql(exact_where, dim, False),
        from_index=from_index,
        asked=_ASKED.format(scope=marks(len(memories))) if asked else "",
    )
    measured = [dim, query, list(length_ids), *memories, asked] if asked else []
    rows = conn.execute(sql, [*args, *exact_args, *([limit] if indexed else []), *measured])
    leg = sorted(((int(r[1]), float(r[2])) for r in rows if r[0] == 0), key=_nearest)
    measure = frozenset(cosine_ids)
    cosines = {
        int(i): cosine_of(d) for kind, i, d, has, _ in rows if kind == 1 and has and i in measure
    }
    lengths = {int(i): int(n) for kind, i, _, _, n in rows if kind == 1 and n is not None}
    return FirstStep([(i, 1.0 - d) for i, d in leg], cosines, lengths)


def second_step(
    conn: Conn,
    scope: Scope,
    f: EntryFilter,
    vector: NDArray[np.float32],
    candidates: Sequence[int],
    centres: Sequence[int],
    reach: int,
    hops: int,
) -> SecondStep:
    """``reach`` turns either side of the raw ``centres`` in their conversations, and for
    those turns, the ``candidates`` and the newer ends of their links (the latest link
    followed ``hops`` times more; 0: no links), what :class:`~recallery.store.steps.
    SecondStep` holds, in one statement."""
    where, params = where_clause(scope, f)
    memories = sorted(scope.memory_ids)
    rows = conn.execute(
        _SECOND.format(where=where),
        [
            list(centres),
            memories,
            reach,
            reach,
            list(candidates),
            hops,
            hops,
            *params,
            int(vector.shape[0]),
            np.ascontiguousarray(vector, np.float32),
        ],
    )
    rows = [r for r in rows if r[1] in scope.memory_ids]
    read = frozenset(int(r[0]) for r in rows)
    links = {int(r[0]): int(r[7]) for r in rows if r[7] is not None}
    return SecondStep(
        read=read,
        followed=frozenset(int(r[0]) for r in rows if r[11]),
        centres=frozenset(int(r[0]) for r in rows if r[8]),
        near={int(r[0]): (tuple(r[9] or ()), tuple(r[10] or ())) for r in rows if r[8]},
        passes=frozenset(int(r[0]) for r in rows if r[2]),
        cosine={int(r[0]): cosine_of(r[4]) for r in rows if r[3]},
        lengths={int(r[0]): int(r[5]) for r in rows if r[5] is not None},
        times={int(r[0]): t for r in rows if (t := from_epoch(r[6])) is not None},
        people={int(r[0]): person_of(r[1], r[12]) for r in rows if r[6] is not None},
        links=links,
        entries={int(r[0]): entry_from_row(r[13:]) for r in rows if r[13] is not None},
    )


class TwoSteps:
    """Mixed into the PostgreSQL store: a search's gather in two statements
    (:meth:`~recallery.store.backend.Backend.first_step`, ``second_step``)."""

    gathers_in_steps = True

    def _indexed(self, conn: Conn, dim: int) -> frozenset[int]:
        """The dimensions with an HNSW index (the store's own)."""
        raise NotImplementedError

    def first_step(
        self,
        conn: Conn,
        scope: Scope,
        vector: NDArray[np.float32],
        f: EntryFilter,
        limit: int,
        cosine_ids: Sequence[int],
        length_ids: Sequence[int],
    ) -> FirstStep | None:
        indexed = self._indexed(conn, int(vector.shape[0]))
        return first_step(conn, scope, vector, f, limit, indexed, cosine_ids, length_ids)

    def second_step(
        self,
        conn: Conn,
        scope: Scope,
        f: EntryFilter,
        vector: NDArray[np.float32],
        candidates: Sequence[int],
        centres: Sequence[int],
        reach: int,
        hops: int,
    ) -> SecondStep | None:
        return second_step(conn, scope, f, vector, candidates, centres, reach, hops)


def _nearest(row: tuple[int, float]) -> tuple[float, int]:
    """Nearest first, equal distances newer first (iterative scans may return rows slightly
    unordered)."""
    return row[1], -row[0]


__all__ = ["TwoSteps", "first_step", "second_step"]

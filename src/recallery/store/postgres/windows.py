"""Conversation windows on PostgreSQL: the windows around the keyword leg's best matches.

A reply like "yes, last July!" names nothing a question asks for; the turn before it does.
So a raw turn is also scored as one document with the turns before it in its conversation
(same memory, session, user and agent), by the rule of :mod:`recallery.store.windowing`.

SQLite keeps windows as links in its in-process index and scores every window of a memory.
Here nothing is stored: a window worth returning holds a turn that matches the query, and
the windows that hold one of the keyword leg's best :data:`SEEDS` matches are read in one
statement: around each seed, the raw turns those windows hold (a range of the conversation
index each side, cut where the window rule says no window holding the seed reaches), their
lengths, the query's lexemes in each and whether the search's filter lets each through.
In a memory where the query matches fewer turns than that, these are all the windows there
are; in a bigger one, the windows of weaker matches only are left out. A conversation is
ordered by its time, then write order, as conversation context orders it (SQLite orders
windows by write order; the two differ only where a client sends conversation times out of
order).

Words of a turn the filter hides (forgotten, disabled, rejected, out of scope) count in no
window, nor does its length; an erased turn is gone from the table, so it is in none.

Statistics: a window is scored by BM25 with the memories' document count, and each term's
document frequency and the average length scaled by the mean number of turns the windows
read hold (a turn is in about that many windows, and a window is about that many turns
long). SQLite counts both exactly over every window; this needs no statistics of its own,
and the estimate is taken from the windows of the query at hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from recallery.models import Scope
from recallery.store.filters import EntryFilter, where_clause
from recallery.store.postgres import topk
from recallery.store.postgres.topk import K1, B, Term
from recallery.store.postgres.vectors import DISTANCE, cosine_of
from recallery.store.sql import Conn
from recallery.store.windowing import REACH, SPAN, WINDOW_TOKENS, reaches

#: The keyword leg's best matches whose windows are read.
SEEDS = 50

# Each seed (place 0) with the raw turns around it in its conversation that the windows
# holding it need, by a LATERAL range of entries_conversation each side: before it (negative
# places, nearest -1) the turns its own window holds (the windows after it reach no further
# back), after it (positive) the turns whose windows reach back to it: at least SPAN each way,
# more while the words counted stay under WINDOW_TOKENS, at most REACH (windowing's rule,
# in SQL). An entry that is not a raw turn comes back alone. Then each one's length, whether
# the filter passes it, and the query's lexemes in it with their frequencies.
_AROUND = f"""
WITH s AS (
    SELECT e.message_id, e.memory_id, e.session_id, e.user_id, e.agent_id, e.valid_at,
           e.fts_len, e.message_type = 'raw' AS raw
    FROM entries e
    WHERE e.message_id = ANY(?::bigint[]) AND e.memory_id = ANY(?::text[])
), around AS MATERIALIZED (
    SELECT s.message_id AS seed, 0 AS place, s.message_id FROM s
    UNION ALL
    SELECT s.message_id, -b.k, b.message_id
    FROM s CROSS JOIN LATERAL (
        SELECT n.message_id, row_number() OVER w AS k,
               s.fts_len + sum(n.fts_len) OVER w - n.fts_len AS held
        FROM (
            SELECT n.valid_at, n.message_id, n.fts_len FROM entries n
            WHERE s.raw AND n.memory_id = s.memory_id AND n.session_id = s.session_id
              AND n.user_id = s.user_id AND n.agent_id = s.agent_id
              AND n.message_type = 'raw'
              AND (n.valid_at, n.message_id) < (s.valid_at, s.message_id)
            ORDER BY n.valid_at DESC, n.message_id DESC LIMIT {REACH}) n
        WINDOW w AS (ORDER BY n.valid_at DESC, n.message_id DESC)) b
    WHERE b.k <= {SPAN} OR b.held < {WINDOW_TOKENS}
    UNION ALL
    SELECT s.message_id, a.k, a.message_id
    FROM s CROSS JOIN LATERAL (
        SELECT n.message_id, row_number() OVER w AS k, sum(n.fts_len) OVER w AS held
        FROM (
            SELECT n.valid_at, n.message_id, n.fts_len FROM entries n
            WHERE s.raw AND n.memory_id = s.memory_id AND n.session_id = s.session_id
              AND n.user_id = s.user_id AND n.agent_id = s.agent_id
              AND n.message_type = 'raw'
              AND (n.valid_at, n.message_id) > (s.valid_at, s.message_id)
            ORDER BY n.valid_at, n.message_id LIMIT {REACH}) n
        WINDOW w AS (ORDER BY n.valid_at, n.message_id)) a
    WHERE a.k <= {SPAN} OR a.held < {WINDOW_TOKENS}
)
SELECT a.seed, a.place, e.message_id, e.fts_len, ({{where}}) AS passes,
       t.lexemes, t.tfs{{measured}}
FROM around a JOIN entries e ON e.message_id = a.message_id
LEFT JOIN LATERAL (
    SELECT array_agg(u.lexeme) AS lexemes, array_agg(cardinality(u.positions)) AS tfs
    FROM unnest(ts_filter(setweight(e.fts, 'A', ?::text[]), '{{{{a}}}}')) u
) t ON true{{more}}
ORDER BY 1, 2
"""
# With the query's vector: the cosine and raw length of each seed and each turn after it (the
# windows that hold a seed end there), and of the keyword matches that are no seeds.
_MEASURED = f""",
       a.place >= 0 AND e.embedding IS NOT NULL, CASE WHEN a.place >= 0 THEN {DISTANCE} END,
       CASE WHEN a.place >= 0 AND e.message_type = 'raw' THEN length(e.content) END"""
_MORE = f"""
UNION ALL
SELECT NULL, NULL, e.message_id, NULL, NULL, NULL, NULL, e.embedding IS NOT NULL, {DISTANCE},
       CASE WHEN e.message_type = 'raw' THEN length(e.content) END
FROM entries e WHERE e.message_id = ANY(?::bigint[]) AND e.memory_id = ANY(?::text[])"""


@dataclass
class Window:
    """A window as read: the query lexemes' counts and the length of the turns in it that
    the filter passes, and how many turns it holds."""

    tf: dict[str, int]
    length: int
    turns: int


_Turn = tuple[int, int, bool, dict[str, int]]
"""A turn read: message id, length, whether the filter passes it, query lexemes' counts."""


Measured = tuple[frozenset[int], dict[int, float], dict[int, int]]
"""Of the turns read with the query's vector (``read``), the cosines of those with a stored
vector and the lengths of the raw ones."""


def window_search(
    conn: Conn,
    scope: Scope,
    f: EntryFilter,
    terms: Sequence[Term],
    documents: float,
    avgdl: float,
    seeds: Sequence[int],
    limit: int,
    vector: NDArray[np.float32] | None = None,
    more: Sequence[int] = (),
) -> tuple[list[tuple[int, float]], Measured]:
    """The best ``limit`` windows that hold one of ``seeds`` (the keyword leg's best
    matches of the query, whose ``terms`` and statistics over the memories searched are
    given), as (message_id, BM25) of entries that pass ``f``, best first, equal scores newer
    first; with ``vector``, what the same statement measured of the windows' candidates,
    the seeds and ``more`` (other keyword matches)."""
    if not seeds or limit <= 0:
        return [], (frozenset(), {}, {})
    windows, measured = windows_around(
        conn, scope, f, [t.lexeme for t in terms], seeds, vector, more
    )
    return _scored(windows, terms, documents, avgdl, limit), measured


def windows_around(
    conn: Conn,
    scope: Scope,
    f: EntryFilter,
    lexemes: list[str],
    seeds: Sequence[int],
    vector: NDArray[np.float32] | None = None,
    more: Sequence[int] = (),
) -> tuple[dict[int, Window], Measured]:
    """The windows that hold one of ``seeds``, of turns that pass ``f``, by message id: the
    ``lexemes``' counts and the length of the members ``f`` passes, and how many turns the
    window holds; with ``vector``, the cosines and lengths of the seeds, the turns after
    them that were read and ``more``."""
    where, params = where_clause(scope, f)
    memories = sorted(scope.memory_ids)
    measuring = vector is not None
    sql = _AROUND.format(
        where=where, measured=_MEASURED if measuring else "", more=_MORE if measuring else ""
    )
    args: list[object] = [list(seeds), memories, *params]
    if vector is not None:
        query = np.ascontiguousarray(vector, np.float32)
        args += [int(query.shape[0]), query, lexemes, int(query.shape[0]), query, list(more)]
        args += [memories]
    else:
        args.append(lexemes)
    rows = conn.execute(sql, args)
    around: dict[int, tuple[list[_Turn], list[int]]] = {}
    read: set[int] = set()
    cosine: dict[int, float] = {}
    lengths: dict[int, int] = {}
    for row in rows:
        seed, place, message_id, length, passes, held, tfs = row[:7]
        if measuring and (place is None or place >= 0):
            read.add(message_id)
            has, distance, size = row[7:]
            if has:
                cosine[message_id] = cosine_of(distance)
            if size is not None:
                lengths[message_id] = int(size)
        if seed is None:
            continue
        turns, places = around.setdefault(seed, ([], []))
        tf = dict(zip(held, tfs, strict=True)) if held else {}
        turns.append((message_id, length, bool(passes), tf))
        places.append(place)
    return _windows(list(around.values())), (frozenset(read), cosine, lengths)


def _windows(around: list[tuple[list[_Turn], list[int]]]) -> dict[int, Window]:
    """The windows that hold each seed (the turn at place 0 of each list): its own and
    those of the turns after it until one no longer reaches back to it (no later one does
    then). How far each window reaches comes from one call of the shared rule for every
    seed's turns (a call per seed cost a search at a million entries about 4 ms)."""
    seats = [places.index(0) for _, places in around]
    own: list[int] = []
    before: list[list[int]] = []
    for (turns, _), seat in zip(around, seats, strict=True):
        lengths = [t[1] for t in turns]
        for at in range(seat, len(turns)):
            own.append(lengths[at])
            # nearest first; -1: no turn there
            before.append([lengths[at - k] if at - k >= 0 else -1 for k in range(1, REACH + 1)])
    reach = reaches(
        np.asarray(own, np.float64), np.asarray(before, np.float64).reshape(-1, REACH)
    ).tolist()
    out: dict[int, Window] = {}
    start = 0  # where this seed's turns begin in ``reach``
    for (turns, _), seat in zip(around, seats, strict=True):
        backs = reach[start : start + len(turns) - seat]
        start += len(backs)
        for at, back in enumerate(backs, start=seat):
            if at - back > seat:
                break
            message_id, _, passes, _ = turns[at]
            if message_id in out or not passes:
                continue
            tf: dict[str, int] = {}
            length = 0
            for _, size, shown, counts in turns[at - back : at + 1]:
                if shown:
                    length += size
                    for lexeme, n in counts.items():
                        tf[lexeme] = tf.get(lexeme, 0) + n
            out[message_id] = Window(tf, length, back + 1)
    return out


def _scored(
    windows: dict[int, Window],
    terms: Sequence[Term],
    documents: float,
    avgdl: float,
    limit: int,
) -> list[tuple[int, float]]:
    if not windows:
        return []
    size = sum(w.turns for w in windows.values()) / len(windows)
    average = max(avgdl * size, 1.0)
    weights: dict[str, float] = {}
    for t in terms:
        if 2 * t.df >= documents:
            continue  # in half the windows or more: idf at its floor, worth nothing
        once = topk.idf(documents, float(t.df))
        weights[t.lexeme] = t.weight * topk.idf(documents, min(t.df * size, documents)) / once
    scores: dict[int, float] = {}
    for message_id, w in windows.items():
        norm = K1 * (1 - B + B * w.length / average)
        total = sum(
            weight * w.tf[lexeme] * (K1 + 1) / (w.tf[lexeme] + norm)
            for lexeme, weight in weights.items()
            if w.tf.get(lexeme)
        )
        if total > 0:
            scores[message_id] = total
    return sorted(scores.items(), key=lambda r: (-r[1], -r[0]))[:limit]

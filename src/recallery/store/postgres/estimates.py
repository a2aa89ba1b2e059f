"""What PostgreSQL's statistics of ``entries`` say before a keyword search's first round: how
the documents spread over the length tiers, and what share of a memory's entries the search's
filter lets through.

Both only aim the first round (:meth:`.topk.Planner.first_threshold`): a round's proof makes
the result exact whatever the aim, so a stale or wrong estimate costs a round, never a row.
A filter that passes one entry in ten left the first round a tenth of the matches it aimed
at, and a million-entry search then took 1.73 rounds instead of 1.2 (p50 52 against 33 ms);
aimed at ten times as many documents it took 1.09. The statistics are the table's, read once
per :data:`TTL_S` per database: they change only when the table is analysed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from recallery.store.filters import EntryFilter
from recallery.store.postgres import topk
from recallery.store.postgres.conn import PgConn
from recallery.store.sql import Conn, Row

#: How long a process reuses a database's statistics.
TTL_S = 60.0
#: The most a filter multiplies the first round's aim: an estimate that is wrong (a value the
#: statistics take for rare that fills this memory) costs a round at most this much bigger.
MAX_AIM = 16.0

#: One row per analysed column of interest, each with the table's estimated rows (a table
#: never analysed gives one row of NULLs but that).
STATISTICS = """
SELECT s.attname, s.null_frac, s.n_distinct, s.most_common_vals::text::text[],
       s.most_common_freqs, s.histogram_bounds::text::text[], c.reltuples
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
LEFT JOIN pg_stats s ON s.schemaname = n.nspname AND s.tablename = c.relname
    AND s.attname IN ('fts_len', 'user_id', 'agent_id', 'session_id')
WHERE c.relname = 'entries' AND c.relkind IN ('r', 'p')
"""


@dataclass(frozen=True)
class Column:
    """A column's statistics: the share of NULLs, the distinct values (negative: a fraction
    of the rows, 0: unknown, as ``pg_stats`` gives it) and the most common values with their
    shares."""

    null_frac: float
    n_distinct: float
    common: dict[str, float]

    def share(self, value: str, rows: float) -> float:
        """The share of the table's rows holding ``value``: its own if it is a common value,
        else the rest spread evenly over the other distinct values."""
        if value in self.common:
            return self.common[value]
        if self.n_distinct == 0:
            return 1.0  # unknown: no guess
        distinct = self.n_distinct if self.n_distinct >= 0 else -self.n_distinct * rows
        others = distinct - len(self.common)
        rest = 1.0 - self.null_frac - sum(self.common.values())
        if others >= 1.0 and rest > 0.0:
            return rest / others
        return 1.0 / max(rows, 1.0)  # not seen in the sample: rare


@dataclass(frozen=True)
class TableStatistics:
    """Rows of ``entries``, its documents' shares per length tier (None before the table is
    analysed) and the filtered columns' statistics."""

    rows: float = 0.0
    tier_shares: NDArray[np.float64] | None = None
    columns: dict[str, Column] = field(default_factory=dict)

    def passing(self, f: EntryFilter, documents: float) -> float:
        """The share of a scope of ``documents`` entries that ``f``'s user, agents and session
        let through, were they independent. A value's share of the table is scaled to the
        scope, as if its rows lay there (a user is usually one tenant's), and capped at 1;
        1 for what the statistics do not know."""
        if documents <= 0 or self.rows <= 0:
            return 1.0
        named = {  # the columns a retrieval filter names values of
            "user_id": [f.user_id] if f.user_id is not None else [],
            "agent_id": sorted(f.agent_ids or ()),
            "session_id": [f.session_id] if f.session_id is not None else [],
        }
        share = 1.0
        for name, values in named.items():
            share *= self.share(name, values, documents)
        return share

    def share(self, name: str, values: list[str], documents: float) -> float:
        """The share of a scope of ``documents`` entries holding one of ``values`` in the
        column ``name`` (1 for none, or what the statistics do not know)."""
        column = self.columns.get(name)
        if column is None or not values or documents <= 0 or self.rows <= 0:
            return 1.0
        table = min(sum(column.share(v, self.rows) for v in values), 1.0)
        return min(table * self.rows / documents, 1.0)

    def aim(self, f: EntryFilter, documents: float) -> float:
        """How many times the unfiltered first round's documents to aim at: 1 / the share
        ``f`` passes, at most :data:`MAX_AIM`."""
        return min(1.0 / max(self.passing(f, documents), 1e-12), MAX_AIM)


_KEPT: dict[str, tuple[float, TableStatistics]] = {}


def table_statistics(conn: Conn) -> TableStatistics:
    """The statistics of ``entries``, read once per :data:`TTL_S` per database once the
    table has been analysed. Before, each search reads them again, so the first analysis
    (autovacuum's, after a bulk load) aims the rounds at once: kept unanalysed for a minute,
    a freshly loaded 100k store searched with 2.3 keyword rounds instead of 1.15."""
    key = conn.raw.info.dsn if isinstance(conn, PgConn) else None
    now = time.monotonic()
    if key is not None and (kept := _KEPT.get(key)) is not None and now - kept[0] < TTL_S:
        return kept[1]
    stats = parse(conn.execute(STATISTICS))
    if key is not None and stats.tier_shares is not None:
        _KEPT[key] = (now, stats)
    return stats


def parse(rows: list[Row]) -> TableStatistics:
    """:data:`STATISTICS`' rows as :class:`TableStatistics`."""
    if not rows:
        return TableStatistics()
    shares, columns = None, {}
    for name, nulls, distinct, values, freqs, histogram, _ in rows:
        if name is None:
            continue
        common, frequencies = [str(v) for v in values or []], [float(x) for x in freqs or []]
        if name == "fts_len":
            lengths = [int(v) for v in histogram or []]
            shares = topk.tier_shares([int(v) for v in common], frequencies, lengths)
        else:
            by_value = dict(zip(common, frequencies, strict=True))
            columns[str(name)] = Column(float(nulls), float(distinct), by_value)
    return TableStatistics(max(float(rows[0][6]), 0.0), shares, columns)


__all__ = [
    "MAX_AIM",
    "STATISTICS",
    "TTL_S",
    "Column",
    "TableStatistics",
    "parse",
    "table_statistics",
]

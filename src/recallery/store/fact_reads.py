"""Reads of what became of a memory's facts, for its Facts page: how many of the facts a filter
selects are current, how many versions were replaced since, how often a turn said one again,
and how many were erased or evicted since. Counted in three grouped statements inside the
page's own read, never a row at a time. Mixed into the store's :class:`~.reader.Reader`
beside the entry reads, as people and jobs are."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from recallery.models import EntryType, Scope
from recallery.requests.curation import FactCounts
from recallery.store.filters import EntryFilter, where_clause
from recallery.store.sql import Conn, marks

if TYPE_CHECKING:
    from recallery.store.backend import Backend


class FactReads:
    """Mixed into :class:`~.reader.Reader`, over its connection."""

    conn: Conn
    store: Backend

    def fact_counts(self, scope: Scope, f: EntryFilter) -> FactCounts:
        """The outcomes of the entries of ``scope`` that ``f`` selects, every version counted
        once: current or replaced since; the turns still held that repeated one (evidence);
        and the tombstones of those erased or evicted since, where ``f`` selects by type
        alone (a tombstone keeps no user, trust, state or text: else None, not a guess)."""
        if not scope:
            return FactCounts()
        every_version = self.store.narrowed(self.conn, replace(f, current_only=False))
        where, params = where_clause(scope, every_version, id_array=self.store.id_array)
        ((every, retired),) = self.conn.execute(
            "SELECT count(*), count(e.retired_at) "
            f"FROM {self.store.entries_table(every_version)} WHERE {where}",
            params,
        )
        ((repeated,),) = self.conn.execute(
            "SELECT count(*) FROM evidence v JOIN entries e ON e.message_id = v.message_id "
            f"WHERE {where} AND EXISTS (SELECT 1 FROM entries t WHERE t.message_id = v.source_id)",
            params,
        )
        if replace(f, types=None, current_only=True) != EntryFilter():
            return FactCounts(int(every) - int(retired), int(repeated), int(retired), None, None)
        ids = sorted(scope.memory_ids)
        kinds = sorted(t.value for t in (f.types or EntryType.extracted()))
        rows = self.conn.execute(
            "SELECT actor LIKE 'policy:%', count(*) FROM tombstones "
            f"WHERE memory_id IN ({marks(len(ids))}) AND message_type IN ({marks(len(kinds))}) "
            "GROUP BY actor LIKE 'policy:%'",
            [*ids, *kinds],
        )
        gone = {bool(evicted): int(n) for evicted, n in rows}
        return FactCounts(
            current=int(every) - int(retired),
            repeated=int(repeated),
            replaced=int(retired),
            erased=gone.get(False, 0),
            evicted=gone.get(True, 0),
        )

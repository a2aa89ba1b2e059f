"""Reads: every query a caller may run over one connection's snapshot.

A :class:`Reader` is what :meth:`Store.read` yields (and a :class:`~.writer.Writer` extends).
Its statements are portable SQL; where a backend answers faster from its own index (keyword
and vector candidates, conversation neighbours, stored vectors) it calls the backend's hook
on :class:`~.base.Store`. Every entry query takes a :class:`Scope`, and an empty scope
returns nothing without running a query.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from itertools import pairwise
from typing import TYPE_CHECKING

from recallery.clock import to_epoch
from recallery.models import (
    AuditEvent,
    Entry,
    EntryType,
    Memory,
    Scope,
    Tombstone,
)
from recallery.store.accounts import AccountReads
from recallery.store.fact_reads import FactReads
from recallery.store.filters import EntryFilter, where_clause
from recallery.store.job_reads import JobReads
from recallery.store.leg_reads import LegReads
from recallery.store.neighbours import reach, visible_neighbours
from recallery.store.owners import crossed_links
from recallery.store.queries import AuditQuery, MemoryQuery, Passing, remembering
from recallery.store.requestlog import RequestLogReads
from recallery.store.rows import (
    AUDIT_COLUMNS,
    ENTRY_COLUMNS,
    MEMORY_COLUMNS,
    TOMBSTONE_COLUMNS,
    audit_from_row,
    entry_from_row,
    memory_from_row,
    tombstone_from_row,
)
from recallery.store.sql import Conn, Row, chunks, marks
from recallery.store.subjects import SubjectReads
from recallery.store.supersession import SupersessionReads

if TYPE_CHECKING:
    from recallery.store.backend import Backend

#: The entry columns as selected from ``entries e``.
_ENTRY_SELECT = ", ".join(f"e.{c.strip()}" for c in ENTRY_COLUMNS.split(","))


class Reader(
    AccountReads, FactReads, JobReads, LegReads, RequestLogReads, SubjectReads, SupersessionReads
):
    """Read queries over one connection. Every entry query takes a :class:`Scope`."""

    def __init__(self, store: Backend, conn: Conn) -> None:
        self.store = store
        self.conn = conn
        self._checked: dict[tuple[Scope, EntryFilter], dict[int, bool]] | None = None

    def remember_checks(self) -> None:
        """Remember which ids passed which filter, so the legs of one search never check an
        id twice. Only where rows cannot change meanwhile (a read snapshot, not a writer)."""
        self._checked = {}

    # --- memories -------------------------------------------------------------------------

    def memory(self, memory_id: str) -> Memory | None:
        rows = self.conn.execute(f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ?", [memory_id])
        return memory_from_row(rows[0]) if rows else None

    def memories(self, ids: Iterable[str]) -> list[Memory]:
        wanted = sorted(set(ids))
        if not wanted:
            return []
        rows = self.conn.execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id IN ({marks(len(wanted))})", wanted
        )
        return [memory_from_row(r) for r in rows]

    def every_memory(self) -> list[Memory]:
        """Every memory of every tenant (an operator's request; the caller checks who asks)."""
        rows = self.conn.execute(f"SELECT {MEMORY_COLUMNS} FROM memories ORDER BY id")
        return [memory_from_row(r) for r in rows]

    def crossed_links(self, memory_ids: Sequence[str]) -> list[tuple[int, int]]:
        """Version links joining two people's entries (:func:`.owners.crossed_links`)."""
        return crossed_links(self.conn, memory_ids)

    def memory_named(self, tenant_id: str, name: str) -> Memory | None:
        rows = self.conn.execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE tenant_id = ? AND name = ?",
            [tenant_id, name],
        )
        return memory_from_row(rows[0]) if rows else None

    def find_memories(self, q: MemoryQuery) -> tuple[list[Memory], int]:
        tenants = sorted(q.tenant_ids if q.owner_ids is None else q.tenant_ids & q.owner_ids)
        if not tenants:
            return [], 0
        sql = [f"tenant_id IN ({marks(len(tenants))})", "(tenant_id = ? OR permissions = 'team')"]
        params: list[object] = [*tenants, q.user_id]
        if q.keywords:
            sql.append("lower(name) LIKE ? ESCAPE '!'")
            kw = q.keywords.lower().replace("!", "!!").replace("%", "!%").replace("_", "!_")
            params.append(f"%{kw}%")
        if q.type_flags is not None:
            sql.append("(memory_types & ?) > 0")
            params.append(q.type_flags)
        if q.storage_type is not None:
            sql.append("storage_type = ?")
            params.append(q.storage_type)
        if q.ids is not None:
            ids = sorted(q.ids)
            if not ids:
                return [], 0
            sql.append(f"id IN ({marks(len(ids))})")
            params.extend(ids)
        where = " AND ".join(sql)
        total = self.conn.execute(f"SELECT count(*) FROM memories WHERE {where}", params)[0][0]
        rows = self.conn.execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {where} "
            "ORDER BY updated_at DESC, id LIMIT ? OFFSET ?",
            [*params, q.limit, q.offset],
        )
        return [memory_from_row(r) for r in rows], int(total)

    # --- entries --------------------------------------------------------------------------

    def entries(
        self,
        scope: Scope,
        f: EntryFilter,
        *,
        order: str = "recorded",
        limit: int = 30,
        offset: int = 0,
    ) -> tuple[list[Entry], int]:
        """Entries of ``scope`` passing ``f``, newest first by record or valid time."""
        if not scope:
            return [], 0
        f = self.store.narrowed(self.conn, f)
        where, params = self._where(scope, f)
        key = {"recorded": "e.message_id DESC", "valid": "e.valid_at DESC, e.message_id DESC"}
        table = self.store.entries_table(f)
        total = self.conn.execute(f"SELECT count(*) FROM {table} WHERE {where}", params)[0][0]
        rows = self.conn.execute(
            f"SELECT {_ENTRY_SELECT} FROM {table} WHERE {where} "
            f"ORDER BY {key[order]} LIMIT ? OFFSET ?",
            [*params, limit, offset],
        )
        return [entry_from_row(r) for r in rows], int(total)

    def get_entries(self, scope: Scope, ids: Iterable[int]) -> dict[int, Entry]:
        """Those of ``ids`` in ``scope``, in any state (one query, no count)."""
        rows = self._by_id(scope, ids, _ENTRY_SELECT)
        return {e.message_id: e for e in map(entry_from_row, rows)}

    def lengths(self, scope: Scope, ids: Iterable[int]) -> dict[int, int]:
        """The length in characters of the raw turns among ``ids`` in ``scope``, in any state:
        what context that adapts reads per search (from the backend's memory where it holds
        them), without building their entries."""
        wanted = list(ids)
        if not scope or not wanted:
            return {}
        if (held := self.store.held_lengths(self.conn, scope, wanted)) is not None:
            return held
        rows = self._by_id(scope, wanted, "e.message_id, e.message_type, length(e.content)")
        return {int(i): int(n) for i, kind, n in rows if kind == EntryType.RAW.value}

    def valid_times(self, scope: Scope, ids: Iterable[int]) -> list[Row]:
        """(id, valid time in epoch seconds, memory, end user) of ``ids`` in ``scope``."""
        wanted = list(ids)
        if (held := self.store.held_times(self.conn, scope, wanted)) is not None:
            return list(held)
        return self._by_id(scope, wanted, "e.message_id, e.valid_at, e.memory_id, e.user_id")

    def _by_id(self, scope: Scope, ids: Iterable[int], columns: str) -> list[Row]:
        """``columns`` of those of ``ids`` in ``scope``, in any state."""
        if not scope or not (wanted := frozenset(ids)):
            return []
        where, params = self._where(scope, EntryFilter(message_ids=wanted, current_only=False))
        sql = f"SELECT {columns} FROM {self.store.entries_by_id} WHERE {where}"
        return self.conn.execute(sql, params)

    def entry(self, scope: Scope, message_id: int) -> Entry | None:
        return self.get_entries(scope, [message_id]).get(message_id)

    def oldest_entries(
        self, scope: Scope, f: EntryFilter, *, limit: int = 30, offset: int = 0
    ) -> tuple[list[Entry], int]:
        """Entries of ``scope`` passing ``f``, oldest first (in the order the store learned
        them), and how many pass."""
        if not scope:
            return [], 0
        where, params = self._where(scope, f)
        total = self.conn.execute(f"SELECT count(*) FROM entries e WHERE {where}", params)[0][0]
        rows = self.conn.execute(
            f"SELECT {_ENTRY_SELECT} FROM entries e WHERE {where} "
            "ORDER BY e.message_id LIMIT ? OFFSET ?",
            [*params, limit, offset],
        )
        return [entry_from_row(r) for r in rows], int(total)

    def entry_ids(self, scope: Scope, f: EntryFilter) -> list[int]:
        """The ids of every entry of ``scope`` passing ``f``, ascending."""
        if not scope:
            return []
        where, params = self._where(scope, f)
        table = self.store.entries_table(f)
        sql = f"SELECT e.message_id FROM {table} WHERE {where} ORDER BY e.message_id"
        return [int(r[0]) for r in self.conn.execute(sql, params)]

    def type_counts(self, scope: Scope, f: EntryFilter) -> dict[EntryType, int]:
        """How many entries of ``scope`` pass ``f``, per type (types without any left out)."""
        if not scope:
            return {}
        where, params = self._where(scope, f)
        rows = self.conn.execute(
            f"SELECT e.message_type, count(*) FROM entries e WHERE {where} GROUP BY e.message_type",
            params,
        )
        return {EntryType(r[0]): int(r[1]) for r in rows}

    def memory_type_counts(self, scope: Scope, f: EntryFilter) -> dict[str, dict[EntryType, int]]:
        """:meth:`type_counts` for each memory of ``scope`` at once (one grouped query;
        memories without any left out)."""
        if not scope:
            return {}
        where, params = self._where(scope, f)
        rows = self.conn.execute(
            f"SELECT e.memory_id, e.message_type, count(*) FROM entries e WHERE {where} "
            "GROUP BY e.memory_id, e.message_type",
            params,
        )
        out: dict[str, dict[EntryType, int]] = {}
        for memory_id, kind, n in rows:
            out.setdefault(str(memory_id), {})[EntryType(kind)] = int(n)
        return out

    def recorded_counts(
        self, scope: Scope, f: EntryFilter, starts: Sequence[datetime], end: datetime
    ) -> list[int]:
        """How many entries of ``scope`` passing ``f`` were recorded in each span from one of
        ``starts`` (ascending) to the next, the last to ``end``: one statement, a count per
        span (each a range of an index on record time where ``f`` names a user)."""
        if not scope or not starts:
            return [0] * len(starts)
        where, params = self._where(scope, f)
        edges = [to_epoch(t) for t in (*starts, end)]
        one = f"FROM entries e WHERE {where} AND e.recorded_at >= ? AND e.recorded_at < ?"
        sql = " UNION ALL ".join(f"SELECT {i}, count(*) {one}" for i in range(len(starts)))
        values = [v for lo, hi in pairwise(edges) for v in (*params, lo, hi)]
        counts: dict[int, int] = {int(i): int(n) for i, n in self.conn.execute(sql, values)}
        return [int(counts.get(i, 0)) for i in range(len(starts))]

    def neighbours(
        self, scope: Scope, ids: Iterable[int], f: EntryFilter, span: int, *, theirs: bool = False
    ) -> dict[int, tuple[tuple[int, ...], ...]]:
        """For each raw entry among ``ids``: the ids of the visible raw turns at distance
        1..``span`` before and after it in its conversation (same memory, user, agent and
        session; by valid time, then id); ``theirs``: for those neighbours too, in one lookup."""
        wanted = sorted(set(ids))
        raw = f.types is None or EntryType.RAW in f.types
        if not scope or not wanted or span < 1 or not raw:
            return {}
        near = self.store.conversation_near(self.conn, scope, wanted, reach(span) * (1 + theirs))
        return visible_neighbours(near, span, self._passing(scope, f), theirs=theirs)

    def passing(self, scope: Scope, f: EntryFilter, ids: Iterable[int]) -> set[int]:
        """Which of ``ids`` are entries of ``scope`` that pass ``f``."""
        wanted = sorted(set(ids))
        allowed: set[int] = set()
        for chunk in chunks(wanted, 10_000):
            where, params = self._where(scope, replace(f, message_ids=frozenset(chunk)))
            rows = self.conn.execute(
                f"SELECT e.message_id FROM {self.store.entries_by_id} WHERE {where}", params
            )
            allowed.update(int(r[0]) for r in rows)
        return allowed

    def _where(self, scope: Scope, f: EntryFilter) -> tuple[str, list[object]]:
        """:func:`~recallery.store.filters.where_clause` in the form this backend takes best."""
        return where_clause(scope, f, id_array=self.store.id_array)

    def _passing(self, scope: Scope, f: EntryFilter) -> Passing:
        """:meth:`passing` for one scope and filter, as search legs take it: the backend's
        in-memory check where it has one, else SQL (remembered)."""
        if (held := self.store.held_filter(self.conn, scope, f)) is not None:
            return held
        if self._checked is None:
            return lambda ids: self.passing(scope, f, ids)
        return remembering(
            lambda ids: self.passing(scope, f, ids), self._checked.setdefault((scope, f), {})
        )

    def evidence(self, message_id: int) -> list[int]:
        rows = self.conn.execute(
            "SELECT source_id FROM evidence WHERE message_id = ? ORDER BY source_id", [message_id]
        )
        return [int(r[0]) for r in rows]

    def tombstones(self, memory_id: str) -> list[Tombstone]:
        rows = self.conn.execute(
            f"SELECT {TOMBSTONE_COLUMNS} FROM tombstones WHERE memory_id = ? ORDER BY message_id",
            [memory_id],
        )
        return [tombstone_from_row(r) for r in rows]

    # --- audit and jobs -------------------------------------------------------------------

    def audit_events(self, q: AuditQuery) -> tuple[list[AuditEvent], int]:
        sql: list[str] = []
        params: list[object] = []
        if q.memory_ids is not None:
            ids = sorted(q.memory_ids)
            if not ids:
                return [], 0
            sql.append(f"memory_id IN ({marks(len(ids))})")
            params.extend(ids)
        for column, value in (("message_id", q.message_id), ("actor", q.actor)):
            if value is not None:
                sql.append(f"{column} = ?")
                params.append(value)
        if q.action is not None:
            sql.append("action = ?")
            params.append(q.action)
        if q.since is not None:
            sql.append("at >= ?")
            params.append(to_epoch(q.since))
        if q.until is not None:
            sql.append("at < ?")
            params.append(to_epoch(q.until))
        where = " AND ".join(sql) or "1 = 1"
        total = self.conn.execute(f"SELECT count(*) FROM audit WHERE {where}", params)[0][0]
        rows = self.conn.execute(
            f"SELECT {AUDIT_COLUMNS} FROM audit WHERE {where} ORDER BY id DESC LIMIT ? OFFSET ?",
            [*params, q.limit, q.offset],
        )
        return [audit_from_row(r) for r in rows], int(total)

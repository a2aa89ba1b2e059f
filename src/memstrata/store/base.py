"""The storage port: one base class, a few backend primitives, everything else derived here.

A backend supplies connections, row locking, keyword and vector candidate search, vector
encoding and its migrations. The rows, filters and lifecycle writes are written once, in
portable SQL with ``?`` placeholders, so every backend runs the same statements.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from memstrata.clock import from_epoch, to_epoch
from memstrata.models import (
    AuditEvent,
    Entry,
    EntryType,
    ForgettingPolicy,
    Job,
    JobState,
    Memory,
    NewEntry,
    Origin,
    Permission,
    Scope,
    Tombstone,
    Trust,
    User,
)
from memstrata.store.filters import EntryFilter, where_clause

Row = tuple[Any, ...]


class Conn(Protocol):
    """The little a backend connection must do: run SQL with ``?`` placeholders."""

    def execute(self, sql: str, params: Sequence[object] = ()) -> list[Row]: ...

    def executemany(self, sql: str, rows: Iterable[Sequence[object]]) -> None: ...


ENTRY_COLUMNS = (
    "message_id, memory_id, tenant_id, message_type, content, valid_at, recorded_at, user_id, "
    "agent_id, session_id, source_id, invalid_at, retired_at, supersedes, superseded_by, status, "
    "trust, origin, forget_at, last_used_at, use_count, size_bytes"
)
MEMORY_COLUMNS = (
    "id, tenant_id, name, memory_types, embd_id, llm_id, permissions, memory_size, "
    "forgetting_policy, temperature, system_prompt, user_prompt, avatar, description, "
    "storage_type, created_at, updated_at, used_bytes, entry_count"
)
JOB_COLUMNS = (
    "id, kind, tenant_id, memory_id, message_id, state, attempts, progress, progress_msg, "
    "outcome, created_at, updated_at, run_after, lease_until, lease_owner, result"
)
AUDIT_COLUMNS = "id, at, actor, action, memory_id, message_id, reason, before, after"

ENTRY_FIELDS = frozenset(
    {
        "content",
        "valid_at",
        "invalid_at",
        "retired_at",
        "superseded_by",
        "status",
        "trust",
        "forget_at",
        "last_used_at",
        "use_count",
    }
)
MEMORY_FIELDS = frozenset(
    {
        "name",
        "memory_types",
        "embd_id",
        "llm_id",
        "permissions",
        "memory_size",
        "forgetting_policy",
        "temperature",
        "system_prompt",
        "user_prompt",
        "avatar",
        "description",
        "updated_at",
    }
)


def flags_to_types(flags: int) -> tuple[EntryType, ...]:
    return tuple(t for t in EntryType if flags & t.flag)


def _dt(value: float) -> datetime:
    result = from_epoch(value)
    assert result is not None
    return result


def entry_from_row(row: Row) -> Entry:
    return Entry(
        message_id=int(row[0]),
        memory_id=row[1],
        tenant_id=row[2],
        message_type=EntryType(row[3]),
        content=row[4],
        valid_at=_dt(row[5]),
        recorded_at=_dt(row[6]),
        user_id=row[7],
        agent_id=row[8],
        session_id=row[9],
        source_id=row[10],
        invalid_at=from_epoch(row[11]),
        retired_at=from_epoch(row[12]),
        supersedes=row[13],
        superseded_by=row[14],
        status=bool(row[15]),
        trust=Trust(row[16]),
        origin=Origin(row[17]),
        forget_at=from_epoch(row[18]),
        last_used_at=from_epoch(row[19]),
        use_count=int(row[20]),
        size_bytes=int(row[21]),
    )


def memory_from_row(row: Row) -> Memory:
    return Memory(
        id=row[0],
        tenant_id=row[1],
        name=row[2],
        memory_types=flags_to_types(int(row[3])),
        embd_id=row[4],
        llm_id=row[5],
        permissions=Permission(row[6]),
        memory_size=int(row[7]),
        forgetting_policy=ForgettingPolicy(row[8]),
        temperature=float(row[9]),
        system_prompt=row[10],
        user_prompt=row[11],
        avatar=row[12],
        description=row[13],
        storage_type=row[14],
        created_at=from_epoch(row[15]),
        updated_at=from_epoch(row[16]),
        used_bytes=int(row[17]),
        entry_count=int(row[18]),
    )


def job_from_row(row: Row) -> Job:
    return Job(
        id=int(row[0]),
        kind=row[1],
        tenant_id=row[2],
        memory_id=row[3],
        message_id=row[4],
        state=JobState(row[5]),
        attempts=int(row[6]),
        progress=float(row[7]),
        progress_msg=row[8],
        outcome=row[9],
        created_at=_dt(row[10]),
        updated_at=_dt(row[11]),
        run_after=from_epoch(row[12]),
        lease_until=from_epoch(row[13]),
        lease_owner=row[14],
        result=json.loads(row[15]) if row[15] else {},
    )


def audit_from_row(row: Row) -> AuditEvent:
    return AuditEvent(
        id=int(row[0]),
        at=_dt(row[1]),
        actor=row[2],
        action=row[3],
        memory_id=row[4],
        message_id=row[5],
        reason=row[6],
        before=json.loads(row[7]) if row[7] else {},
        after=json.loads(row[8]) if row[8] else {},
    )


def _db_value(value: object) -> object:
    if isinstance(value, datetime):
        return to_epoch(value)
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (Trust, Permission, ForgettingPolicy, EntryType, Origin, JobState)):
        return value.value
    if isinstance(value, tuple) and all(isinstance(v, EntryType) for v in value):
        return sum(v.flag for v in value)
    return value


def _marks(n: int) -> str:
    return ",".join("?" * n)


@dataclass(frozen=True)
class MemoryQuery:
    """Which memories to list. ``visible_to`` is the caller: (user id, tenant ids)."""

    user_id: str
    tenant_ids: frozenset[str]
    keywords: str | None = None
    type_flags: int | None = None
    storage_type: str | None = None
    owner_ids: frozenset[str] | None = None
    ids: frozenset[str] | None = None
    limit: int = 30
    offset: int = 0


@dataclass(frozen=True)
class AuditQuery:
    memory_ids: frozenset[str] | None = None
    message_id: int | None = None
    actor: str | None = None
    action: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    limit: int = 100
    offset: int = 0


@dataclass(frozen=True)
class EvictionCandidate:
    message_id: int
    size_bytes: int
    forgotten: bool


class Reader:
    """Read queries over one connection. Every entry query takes a :class:`Scope`."""

    def __init__(self, store: Store, conn: Conn) -> None:
        self.store = store
        self.conn = conn

    # --- memories -------------------------------------------------------------------------

    def memory(self, memory_id: str) -> Memory | None:
        rows = self.conn.execute(f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ?", [memory_id])
        return memory_from_row(rows[0]) if rows else None

    def memories(self, ids: Iterable[str]) -> list[Memory]:
        wanted = sorted(set(ids))
        if not wanted:
            return []
        rows = self.conn.execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id IN ({_marks(len(wanted))})", wanted
        )
        return [memory_from_row(r) for r in rows]

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
        sql = [f"tenant_id IN ({_marks(len(tenants))})", "(tenant_id = ? OR permissions = 'team')"]
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
            sql.append(f"id IN ({_marks(len(ids))})")
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
        where, params = where_clause(scope, f)
        key = {"recorded": "e.message_id DESC", "valid": "e.valid_at DESC, e.message_id DESC"}
        table = self.store.entries_by_id if f.message_ids is not None else "entries e"
        total = self.conn.execute(f"SELECT count(*) FROM {table} WHERE {where}", params)[0][0]
        rows = self.conn.execute(
            f"SELECT {_prefixed(ENTRY_COLUMNS)} FROM {table} WHERE {where} "
            f"ORDER BY {key[order]} LIMIT ? OFFSET ?",
            [*params, limit, offset],
        )
        return [entry_from_row(r) for r in rows], int(total)

    def get_entries(self, scope: Scope, ids: Iterable[int]) -> dict[int, Entry]:
        wanted = frozenset(ids)
        if not scope or not wanted:
            return {}
        found, _ = self.entries(
            scope, EntryFilter(message_ids=wanted, current_only=False), limit=len(wanted)
        )
        return {e.message_id: e for e in found}

    def entry(self, scope: Scope, message_id: int) -> Entry | None:
        return self.get_entries(scope, [message_id]).get(message_id)

    def neighbours(
        self, scope: Scope, ids: Iterable[int], f: EntryFilter, span: int
    ) -> dict[int, tuple[tuple[int, ...], ...]]:
        """For each raw entry among ``ids``: the ids of the visible raw turns at distance
        1..``span`` before and after it in its conversation (same memory, user, agent and
        session; ordered by valid time, then id). Other entries have none."""
        wanted = sorted(set(ids))
        raw_visible = f.types is None or EntryType.RAW in f.types
        if not scope or not wanted or span < 1 or not raw_visible:
            return {}
        near = self.store.conversation_near(self.conn, scope, wanted, NEIGHBOUR_REACH * span)
        visible = self._visible_near(scope, f, near, span)  # every turn of ``near`` is raw
        out: dict[int, tuple[tuple[int, ...], ...]] = {}
        for mid, sides in near.items():
            before, after = ([n for n in side if n in visible] for side in sides)
            out[mid] = tuple(
                tuple(x[d] for x in (before, after) if d < len(x)) for d in range(span)
            )
        return out

    def _visible_near(
        self, scope: Scope, f: EntryFilter, near: Mapping[int, Sequence[Sequence[int]]], span: int
    ) -> set[int]:
        """Which turns of ``near`` (sides of turns, nearest first) pass ``f``: the nearest
        ``span`` of every side first, then further out only while some side has fewer than
        ``span`` visible and turns left (hidden turns are rare; each round is one query)."""
        visible: set[int] = set()
        checked: set[int] = set()
        depth = span
        while True:
            ask = {n for sides in near.values() for side in sides for n in side[:depth]}
            ask -= checked
            if not ask:
                return visible
            visible |= self.passing(scope, f, ask)
            checked |= ask
            if not any(
                len(side) > depth and sum(n in visible for n in side[:depth]) < span
                for sides in near.values()
                for side in sides
            ):
                return visible
            depth += span

    def passing(self, scope: Scope, f: EntryFilter, ids: Iterable[int]) -> set[int]:
        """Which of ``ids`` are entries of ``scope`` that pass ``f``."""
        wanted = sorted(set(ids))
        allowed: set[int] = set()
        for i in range(0, len(wanted), 10_000):
            chunk = frozenset(wanted[i : i + 10_000])
            where, params = where_clause(scope, replace(f, message_ids=chunk))
            rows = self.conn.execute(
                f"SELECT e.message_id FROM {self.store.entries_by_id} WHERE {where}", params
            )
            allowed.update(int(r[0]) for r in rows)
        return allowed

    def vectors(self, ids: Sequence[int]) -> dict[int, NDArray[np.float32]]:
        """The stored vectors of those of ``ids`` that exist and have one."""
        if not ids:
            return {}
        return self.store.vectors_of(self.conn, ids)

    def keyword_candidates(
        self, scope: Scope, text: str, f: EntryFilter, limit: int
    ) -> list[tuple[int, float]]:
        """Best keyword matches as (message_id, score), higher is better."""
        if not scope or limit <= 0:
            return []
        return self.store.keyword_search(self.conn, scope, text, f, limit)

    def vector_candidates(
        self, scope: Scope, vector: NDArray[np.float32], f: EntryFilter, limit: int
    ) -> list[tuple[int, float]]:
        """Nearest entries as (message_id, cosine similarity), higher is better."""
        if not scope or limit <= 0:
            return []
        return self.store.vector_search(self.conn, scope, vector, f, limit)

    def evidence(self, message_id: int) -> list[int]:
        rows = self.conn.execute(
            "SELECT source_id FROM evidence WHERE message_id = ? ORDER BY source_id", [message_id]
        )
        return [int(r[0]) for r in rows]

    def tombstones(self, memory_id: str) -> list[Tombstone]:
        rows = self.conn.execute(
            "SELECT message_id, memory_id, tenant_id, message_type, valid_at, recorded_at, "
            "erased_at, actor, reason FROM tombstones WHERE memory_id = ? ORDER BY message_id",
            [memory_id],
        )
        return [
            Tombstone(
                message_id=int(r[0]),
                memory_id=r[1],
                tenant_id=r[2],
                message_type=EntryType(r[3]),
                valid_at=_dt(r[4]),
                recorded_at=_dt(r[5]),
                erased_at=_dt(r[6]),
                actor=r[7],
                reason=r[8],
            )
            for r in rows
        ]

    # --- audit and jobs -------------------------------------------------------------------

    def audit_events(self, q: AuditQuery) -> tuple[list[AuditEvent], int]:
        sql: list[str] = []
        params: list[object] = []
        if q.memory_ids is not None:
            ids = sorted(q.memory_ids)
            if not ids:
                return [], 0
            sql.append(f"memory_id IN ({_marks(len(ids))})")
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

    def job(self, job_id: int) -> Job | None:
        rows = self.conn.execute(f"SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?", [job_id])
        return job_from_row(rows[0]) if rows else None

    def jobs_for_messages(self, message_ids: Sequence[int]) -> dict[int, Job]:
        if not message_ids:
            return {}
        rows = self.conn.execute(
            f"SELECT {JOB_COLUMNS} FROM jobs WHERE message_id IN ({_marks(len(message_ids))}) "
            "ORDER BY id",
            list(message_ids),
        )
        return {int(j.message_id): j for j in map(job_from_row, rows) if j.message_id is not None}

    def jobs(
        self, memory_ids: frozenset[str] | None = None, state: JobState | None = None
    ) -> list[Job]:
        sql: list[str] = []
        params: list[object] = []
        if memory_ids is not None:
            ids = sorted(memory_ids)
            if not ids:
                return []
            sql.append(f"memory_id IN ({_marks(len(ids))})")
            params.extend(ids)
        if state is not None:
            sql.append("state = ?")
            params.append(state.value)
        where = " AND ".join(sql) or "1 = 1"
        rows = self.conn.execute(
            f"SELECT {JOB_COLUMNS} FROM jobs WHERE {where} ORDER BY id", params
        )
        return [job_from_row(r) for r in rows]

    # --- users and keys -------------------------------------------------------------------

    def user(self, user_id: str) -> User | None:
        rows = self.conn.execute(
            "SELECT id, name, is_admin, created_at FROM users WHERE id = ?", [user_id]
        )
        return _user(rows[0]) if rows else None

    def user_named(self, name: str) -> User | None:
        rows = self.conn.execute(
            "SELECT id, name, is_admin, created_at FROM users WHERE name = ?", [name]
        )
        return _user(rows[0]) if rows else None

    def users(self) -> list[User]:
        rows = self.conn.execute("SELECT id, name, is_admin, created_at FROM users ORDER BY name")
        return [_user(r) for r in rows]

    def user_count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM users")[0][0])

    def teams_of(self, user_id: str) -> frozenset[str]:
        rows = self.conn.execute("SELECT tenant_id FROM memberships WHERE user_id = ?", [user_id])
        return frozenset(r[0] for r in rows) | {user_id}

    def members_of(self, tenant_id: str) -> list[str]:
        rows = self.conn.execute(
            "SELECT user_id FROM memberships WHERE tenant_id = ? ORDER BY user_id", [tenant_id]
        )
        return [r[0] for r in rows]

    def api_key(self, key_hash: str) -> tuple[str, str, str | None] | None:
        """(key id, user id, scope json) of a live key with this hash."""
        rows = self.conn.execute(
            "SELECT id, user_id, scope FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL",
            [key_hash],
        )
        return (rows[0][0], rows[0][1], rows[0][2]) if rows else None

    def api_keys(self, user_id: str) -> list[Row]:
        return self.conn.execute(
            "SELECT id, name, scope, created_at, revoked_at FROM api_keys WHERE user_id = ? "
            "ORDER BY created_at",
            [user_id],
        )


#: Candidates whose neighbours one statement looks up (four subqueries each; SQLite allows
#: 500 terms in a compound SELECT).
NEIGHBOUR_CHUNK = 100
#: Turns looked at per side and distance, so hidden (forgotten, disabled...) ones can be skipped.
NEIGHBOUR_REACH = 3


def _chunks_of(rows: list[Row], size: int) -> Iterator[list[Row]]:
    for i in range(0, len(rows), size):
        yield rows[i : i + size]


def _neighbour_query(rows: list[Row], reach: int) -> tuple[str, list[object]]:
    """One statement: for each (id, memory, user, agent, session, valid_at) row, the ``reach``
    nearest raw turns before (side 0) and after (side 1) it in its conversation, visible or
    not (a covering index range each; visibility is checked once for all of them)."""
    same = (
        "e.memory_id = ? AND e.session_id = ? AND e.user_id = ? AND e.agent_id = ? "
        "AND e.message_type = 'raw'"
    )
    parts: list[str] = []
    args: list[object] = []
    for n, (mid, memory_id, user, agent, session, valid) in enumerate(rows):
        for side, op, order in ((0, "<", "DESC"), (1, ">", "ASC")):
            # two index ranges: the same valid time with a nearer id, then strictly beyond
            bounds = (
                (f"e.valid_at = ? AND e.message_id {op} ?", [valid, mid]),
                (f"e.valid_at {op} ?", [valid]),
            )
            for part, (bound, bound_args) in enumerate(bounds):
                parts.append(
                    f"SELECT * FROM (SELECT ? AS centre, {side} AS side, e.valid_at, "
                    f"e.message_id FROM entries e WHERE {same} AND {bound} "
                    f"ORDER BY e.valid_at {order}, e.message_id {order} LIMIT ?) "
                    f"AS n{n}_{side}_{part}"
                )
                args.extend([mid, memory_id, session, user, agent, *bound_args, reach])
    return " UNION ALL ".join(parts), args


def _user(row: Row) -> User:
    return User(id=row[0], name=row[1], is_admin=bool(row[2]), created_at=_dt(row[3]))


def _prefixed(columns: str, alias: str = "e") -> str:
    return ", ".join(f"{alias}.{c.strip()}" for c in columns.split(","))


class Writer(Reader):
    """Writes inside one transaction. Everything here commits or rolls back together."""

    def lock_memory(self, memory_id: str) -> Memory | None:
        """Lock the memory row for this transaction (capacity stays exact) and read it."""
        self.store.lock_memory(self.conn, memory_id)
        return self.memory(memory_id)

    def insert_memory(self, m: Memory) -> None:
        values = [_db_value(getattr(m, f)) for f in _MEMORY_ATTRS]
        self.conn.execute(
            f"INSERT INTO memories ({MEMORY_COLUMNS}) VALUES ({_marks(len(values))})", values
        )

    def update_memory(self, memory_id: str, changes: dict[str, object]) -> None:
        unknown = set(changes) - MEMORY_FIELDS
        if unknown:
            raise ValueError(f"not memory fields: {sorted(unknown)}")
        sets = ", ".join(f"{k} = ?" for k in changes)
        values = [_db_value(v) for v in changes.values()]
        self.conn.execute(f"UPDATE memories SET {sets} WHERE id = ?", [*values, memory_id])

    def delete_memory(self, memory_id: str) -> list[int]:
        ids = [
            int(r[0])
            for r in self.conn.execute(
                "SELECT message_id FROM entries WHERE memory_id = ?", [memory_id]
            )
        ]
        self.delete_entries(memory_id, ids)
        for table in ("tombstones", "jobs"):
            self.conn.execute(f"DELETE FROM {table} WHERE memory_id = ?", [memory_id])
        self.conn.execute("DELETE FROM memories WHERE id = ?", [memory_id])
        return ids

    def insert_entries(
        self, entries: Sequence[NewEntry], vectors: NDArray[np.float32], at: datetime
    ) -> list[int]:
        """Insert entries with their vectors; returns the new message ids in order."""
        ids: list[int] = []
        for e, v in zip(entries, vectors, strict=True):
            row = self.conn.execute(
                "INSERT INTO entries (memory_id, tenant_id, message_type, content, embedding, "
                "valid_at, recorded_at, user_id, agent_id, session_id, source_id, invalid_at, "
                "supersedes, status, trust, origin, use_count, size_bytes) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,0,?) RETURNING message_id",
                [
                    e.memory_id,
                    e.tenant_id,
                    e.message_type.value,
                    e.content,
                    self.store.encode_vector(v),
                    to_epoch(e.valid_at),
                    to_epoch(at),
                    e.user_id,
                    e.agent_id,
                    e.session_id,
                    e.source_id,
                    None if e.invalid_at is None else to_epoch(e.invalid_at),
                    e.supersedes,
                    int(e.status),
                    e.trust.value,
                    e.origin.value,
                    e.size_bytes,
                ],
            )
            ids.append(int(row[0][0]))
            self._account(e.memory_id, e.size_bytes, 1)
        self.store.entries_inserted(self.conn, ids, vectors)
        return ids

    def update_entries(self, ids: Sequence[int], changes: dict[str, object]) -> None:
        unknown = set(changes) - ENTRY_FIELDS
        if unknown:
            raise ValueError(f"not entry fields: {sorted(unknown)}")
        if not ids:
            return
        sets = ", ".join(f"{k} = ?" for k in changes)
        values = [_db_value(v) for v in changes.values()]
        self.conn.execute(
            f"UPDATE entries SET {sets} WHERE message_id IN ({_marks(len(ids))})",
            [*values, *ids],
        )

    def delete_entries(self, memory_id: str, ids: Sequence[int]) -> None:
        """Physically delete entries of one memory, with their keyword-index rows."""
        if not ids:
            return
        for chunk in _chunks(list(ids), 500):
            marks = _marks(len(chunk))
            rows = self.conn.execute(
                f"SELECT count(*), coalesce(sum(size_bytes), 0) FROM entries "
                f"WHERE memory_id = ? AND message_id IN ({marks})",
                [memory_id, *chunk],
            )
            self.store.entries_deleting(self.conn, chunk)
            self.conn.execute(f"DELETE FROM evidence WHERE message_id IN ({marks})", chunk)
            self.conn.execute(
                f"DELETE FROM entries WHERE memory_id = ? AND message_id IN ({marks})",
                [memory_id, *chunk],
            )
            self._account(memory_id, -int(rows[0][1]), -int(rows[0][0]))

    def _account(self, memory_id: str, size: int, count: int) -> None:
        self.conn.execute(
            "UPDATE memories SET used_bytes = used_bytes + ?, entry_count = entry_count + ? "
            "WHERE id = ?",
            [size, count, memory_id],
        )

    def record_use(self, counts: Mapping[int, int], last: Mapping[int, datetime]) -> None:
        """Add retrieval counts and move ``last_used_at`` forward (erased ids are ignored).
        Rows are updated in id order, so concurrent recorders never lock in opposite orders."""
        self.conn.executemany(
            "UPDATE entries SET use_count = use_count + ?, last_used_at = "
            "CASE WHEN last_used_at IS NULL OR last_used_at < ? THEN ? ELSE last_used_at END "
            "WHERE message_id = ?",
            [(n, to_epoch(last[i]), to_epoch(last[i]), i) for i, n in sorted(counts.items())],
        )

    def add_tombstones(self, stones: Sequence[Tombstone]) -> None:
        self.conn.executemany(
            "INSERT INTO tombstones (message_id, memory_id, tenant_id, message_type, valid_at, "
            "recorded_at, erased_at, actor, reason) VALUES (?,?,?,?,?,?,?,?,?)",
            [
                (
                    t.message_id,
                    t.memory_id,
                    t.tenant_id,
                    t.message_type.value,
                    to_epoch(t.valid_at),
                    to_epoch(t.recorded_at),
                    to_epoch(t.erased_at),
                    t.actor,
                    t.reason,
                )
                for t in stones
            ],
        )

    def eviction_candidates(
        self, memory_id: str, policy: ForgettingPolicy, limit: int
    ) -> list[EvictionCandidate]:
        """Entries in eviction order: forgotten first (oldest ``forget_at``), then by policy."""
        second = {
            ForgettingPolicy.FIFO: "recorded_at, message_id",
            ForgettingPolicy.LRU: "coalesce(last_used_at, recorded_at), message_id",
        }[policy]
        rows = self.conn.execute(
            "SELECT message_id, size_bytes, forget_at IS NOT NULL FROM entries "
            "WHERE memory_id = ? ORDER BY forget_at IS NULL, forget_at, "
            f"{second} LIMIT ?",
            [memory_id, limit],
        )
        return [EvictionCandidate(int(r[0]), int(r[1]), bool(r[2])) for r in rows]

    def add_evidence(self, message_id: int, source_id: int, at: datetime) -> bool:
        """Record that ``source_id`` also supports ``message_id``; False if already known."""
        known = self.conn.execute(
            "SELECT 1 FROM evidence WHERE message_id = ? AND source_id = ?", [message_id, source_id]
        )
        if known:
            return False
        self.conn.execute(
            "INSERT INTO evidence (message_id, source_id, at) VALUES (?, ?, ?)",
            [message_id, source_id, to_epoch(at)],
        )
        return True

    def audit(
        self,
        *,
        at: datetime,
        actor: str,
        action: str,
        memory_id: str | None,
        message_id: int | None = None,
        reason: str = "",
        before: dict[str, Any] | None = None,
        after: dict[str, Any] | None = None,
    ) -> None:
        self.conn.execute(
            "INSERT INTO audit (at, actor, action, memory_id, message_id, reason, before, after) "
            "VALUES (?,?,?,?,?,?,?,?)",
            [
                to_epoch(at),
                actor,
                action,
                memory_id,
                message_id,
                reason,
                json.dumps(before or {}, sort_keys=True, default=str),
                json.dumps(after or {}, sort_keys=True, default=str),
            ],
        )

    # --- jobs -----------------------------------------------------------------------------

    def enqueue_job(
        self, *, kind: str, tenant_id: str, memory_id: str, message_id: int | None, at: datetime
    ) -> int:
        stamp = at.strftime("%Y-%m-%d %H:%M:%S")
        rows = self.conn.execute(
            "INSERT INTO jobs (kind, tenant_id, memory_id, message_id, state, attempts, progress, "
            "progress_msg, created_at, updated_at, run_after) "
            "VALUES (?,?,?,?,?,0,0,?,?,?,?) RETURNING id",
            [
                kind,
                tenant_id,
                memory_id,
                message_id,
                JobState.QUEUED.value,
                f"{stamp} Task has been received.",
                to_epoch(at),
                to_epoch(at),
                to_epoch(at),
            ],
        )
        return int(rows[0][0])

    def claim_job(self, now: datetime, lease_seconds: float, owner: str) -> Job | None:
        """Lease the next job to ``owner``: the oldest queued job due by ``now``, or a running
        one whose lease has expired (its worker died). Returns it with ``attempts`` counted."""
        t = to_epoch(now)
        rows = self.conn.execute(
            "SELECT id FROM jobs WHERE (state = ? AND (run_after IS NULL OR run_after <= ?)) "
            f"OR (state = ? AND lease_until <= ?) ORDER BY id LIMIT 1{self.store.claim_suffix}",
            [JobState.QUEUED.value, t, JobState.RUNNING.value, t],
        )
        if not rows:
            return None
        job_id = int(rows[0][0])
        self.conn.execute(
            "UPDATE jobs SET state = ?, lease_owner = ?, lease_until = ?, "
            "attempts = attempts + 1, updated_at = ? WHERE id = ?",
            [JobState.RUNNING.value, owner, t + lease_seconds, t, job_id],
        )
        return self.job(job_id)

    def cancel_jobs(self, message_ids: Sequence[int]) -> None:
        """Drop jobs of entries that no longer exist (erased or evicted turns)."""
        for chunk in _chunks(list(message_ids), 500):
            self.conn.execute(f"DELETE FROM jobs WHERE message_id IN ({_marks(len(chunk))})", chunk)

    def update_job(self, job_id: int, changes: dict[str, object]) -> None:
        values = [
            json.dumps(v, sort_keys=True) if k == "result" else _db_value(v)
            for k, v in changes.items()
        ]
        sets = ", ".join(f"{k} = ?" for k in changes)
        self.conn.execute(f"UPDATE jobs SET {sets} WHERE id = ?", [*values, job_id])

    # --- users and keys -------------------------------------------------------------------

    def insert_user(self, user: User) -> None:
        self.conn.execute(
            "INSERT INTO users (id, name, is_admin, created_at) VALUES (?,?,?,?)",
            [user.id, user.name, int(user.is_admin), to_epoch(user.created_at)],
        )

    def add_member(self, tenant_id: str, user_id: str) -> None:
        self.conn.execute(
            "INSERT INTO memberships (tenant_id, user_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
            [tenant_id, user_id],
        )

    def remove_member(self, tenant_id: str, user_id: str) -> None:
        self.conn.execute(
            "DELETE FROM memberships WHERE tenant_id = ? AND user_id = ?", [tenant_id, user_id]
        )

    def insert_api_key(
        self,
        *,
        key_id: str,
        user_id: str,
        key_hash: str,
        name: str,
        scope: str | None,
        at: datetime,
    ) -> None:
        self.conn.execute(
            "INSERT INTO api_keys (id, user_id, key_hash, name, scope, created_at) "
            "VALUES (?,?,?,?,?,?)",
            [key_id, user_id, key_hash, name, scope, to_epoch(at)],
        )

    def revoke_api_key(self, key_id: str, at: datetime) -> bool:
        rows = self.conn.execute(
            "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL RETURNING id",
            [to_epoch(at), key_id],
        )
        return bool(rows)


_MEMORY_ATTRS = (
    "id",
    "tenant_id",
    "name",
    "memory_types",
    "embd_id",
    "llm_id",
    "permissions",
    "memory_size",
    "forgetting_policy",
    "temperature",
    "system_prompt",
    "user_prompt",
    "avatar",
    "description",
    "storage_type",
    "created_at",
    "updated_at",
    "used_bytes",
    "entry_count",
)


def _chunks(items: list[int], size: int) -> Iterator[list[int]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


class Store(ABC):
    """A storage backend. Subclasses implement the primitives below; the rest lives here."""

    #: Human name of the backend, used in reports.
    name = "abstract"
    #: Appended to the job claim's SELECT: row locking where the backend has it (PostgreSQL:
    #: `` FOR UPDATE SKIP LOCKED``). SQLite needs none: its write transaction is exclusive.
    claim_suffix = ""
    #: The entries table as a query names it when it looks rows up by message id. SQLite's
    #: planner prefers a (memory_id, ...) index range over the primary key even for a short
    #: id list (a scan of the whole memory), so it names an index that starts with the id.
    entries_by_id = "entries e"

    @abstractmethod
    def migrate(self) -> None:
        """Apply numbered migrations not yet recorded."""

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def _read_conn(self) -> AbstractContextManager[Conn]:
        """A connection for reads (a consistent snapshot for its duration)."""

    @abstractmethod
    def _write_conn(self) -> AbstractContextManager[Conn]:
        """A connection inside a write transaction: commit on exit, roll back on error."""

    @abstractmethod
    def lock_memory(self, conn: Conn, memory_id: str) -> None:
        """Serialise writers of one memory until the transaction ends."""

    @abstractmethod
    def keyword_search(
        self, conn: Conn, scope: Scope, text: str, f: EntryFilter, limit: int
    ) -> list[tuple[int, float]]: ...

    @abstractmethod
    def vector_search(
        self, conn: Conn, scope: Scope, vector: NDArray[np.float32], f: EntryFilter, limit: int
    ) -> list[tuple[int, float]]: ...

    @abstractmethod
    def encode_vector(self, vector: NDArray[np.float32]) -> object: ...

    @abstractmethod
    def decode_vector(self, value: Any) -> NDArray[np.float32]: ...

    def conversation_near(
        self, conn: Conn, scope: Scope, ids: Sequence[int], reach: int
    ) -> dict[int, tuple[tuple[int, ...], tuple[int, ...]]]:
        """For each raw entry of ``scope`` among ``ids``: up to ``reach`` raw turns before and
        after it in its conversation, nearest first, visible or not (the caller checks).
        Default: one statement of covering index ranges per :data:`NEIGHBOUR_CHUNK` ids."""
        rows = conn.execute(
            "SELECT message_id, memory_id, user_id, agent_id, session_id, valid_at FROM entries "
            f"WHERE message_type = 'raw' AND message_id IN ({_marks(len(ids))})",
            list(ids),
        )
        rows = [r for r in rows if r[1] in scope.memory_ids]
        found: dict[tuple[int, int], list[tuple[float, int]]] = {}
        for chunk in _chunks_of(rows, NEIGHBOUR_CHUNK):
            sql, args = _neighbour_query(chunk, reach)
            for centre, side, valid, nid in conn.execute(sql, args):
                found.setdefault((int(centre), int(side)), []).append((float(valid), int(nid)))
        out: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = {}
        for row in rows:
            mid = int(row[0])
            before = [n for _, n in sorted(found.get((mid, 0), []), reverse=True)]
            after = [n for _, n in sorted(found.get((mid, 1), []))]
            out[mid] = (tuple(before[:reach]), tuple(after[:reach]))
        return out

    def vectors_of(self, conn: Conn, ids: Sequence[int]) -> dict[int, NDArray[np.float32]]:
        """Stored vectors by message id (see :meth:`Reader.vectors`). Default: read the rows."""
        rows = conn.execute(
            f"SELECT message_id, embedding FROM entries WHERE message_id IN ({_marks(len(ids))})",
            list(ids),
        )
        return {int(r[0]): self.decode_vector(r[1]) for r in rows if r[1] is not None}

    def entries_inserted(
        self, conn: Conn, ids: Sequence[int], vectors: NDArray[np.float32]
    ) -> None:
        """Hook after entries are inserted (index maintenance). Default: nothing."""

    def entries_deleting(self, conn: Conn, ids: Sequence[int]) -> None:
        """Hook before entries are physically deleted (index maintenance). Default: nothing."""

    def warm(self) -> None:
        """Build whatever in-process search state the backend keeps, so the first search does
        not pay for it. Default: nothing (PostgreSQL keeps its indexes in the server)."""

    def scrub(self) -> None:
        """After an erasure: make deleted content unrecoverable from the files. Default: nothing."""

    def files(self) -> list[Path]:
        """Local files holding this store's data, for checks that scan them after an erasure.
        Empty when the data lives in a server this process cannot read (PostgreSQL)."""
        return []

    @contextmanager
    def read(self) -> Iterator[Reader]:
        with self._read_conn() as conn:
            yield Reader(self, conn)

    @contextmanager
    def write(self) -> Iterator[Writer]:
        """One write transaction; it commits when the block ends without an error."""
        with self._write_conn() as conn:
            yield Writer(self, conn)

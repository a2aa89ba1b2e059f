"""Writes: every change to the store, inside one transaction that commits or rolls back whole.

A :class:`Writer` is what :meth:`Store.write` yields; it reads too (it is a
:class:`~.reader.Reader` on the transaction's connection), so a write sees its own changes.
Memory accounting moves with every insert and delete here, backends keep their indexes current
through the hooks it calls, and no version link joins two people (:mod:`.owners`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import NDArray

from recallery.clock import to_epoch
from recallery.models import (
    AuditAction,
    ForgettingPolicy,
    Job,
    JobKind,
    JobState,
    Memory,
    NewEntry,
    Tombstone,
    User,
)
from recallery.store.owners import check_links, check_relinks
from recallery.store.queries import EvictionCandidate
from recallery.store.reader import Reader
from recallery.store.requestlog import RequestLogWrites
from recallery.store.rows import (
    AUDIT_INSERT,
    JOB_INSERT,
    MEMORY_ATTRS,
    MEMORY_COLUMNS,
    TOMBSTONE_COLUMNS,
    USER_COLUMNS,
    audit_row,
    db_value,
    entry_row,
    job_row,
)
from recallery.store.sql import chunks, marks
from recallery.store.supersession import SupersessionWrites

#: Entry columns :meth:`Writer.update_entries` may change.
ENTRY_FIELDS = frozenset(
    {
        "content",
        "valid_at",
        "invalid_at",
        "retired_at",
        "supersedes",
        "superseded_by",
        "status",
        "trust",
        "forget_at",
        "last_used_at",
        "use_count",
    }
)
#: Memory columns :meth:`Writer.update_memory` may change: all but its identity, its
#: storage, its creation and its accounting.
MEMORY_FIELDS = frozenset(MEMORY_ATTRS) - {
    "id",
    "tenant_id",
    "storage_type",
    "created_at",
    "used_bytes",
    "entry_count",
}


class Writer(Reader, RequestLogWrites, SupersessionWrites):
    """Writes inside one transaction. Everything here commits or rolls back together."""

    def lock_memory(self, memory_id: str) -> Memory | None:
        """Lock the memory row for this transaction (capacity stays exact) and read it."""
        self.store.lock_memory(self.conn, memory_id)
        return self.memory(memory_id)

    def insert_memory(self, m: Memory) -> None:
        values = [db_value(getattr(m, f)) for f in MEMORY_ATTRS]
        self.conn.execute(
            f"INSERT INTO memories ({MEMORY_COLUMNS}) VALUES ({marks(len(values))})", values
        )

    def update_memory(self, memory_id: str, changes: dict[str, object]) -> None:
        unknown = set(changes) - MEMORY_FIELDS
        if unknown:
            raise ValueError(f"not memory fields: {sorted(unknown)}")
        sets = ", ".join(f"{k} = ?" for k in changes)
        values = [db_value(v) for v in changes.values()]
        self.conn.execute(f"UPDATE memories SET {sets} WHERE id = ?", [*values, memory_id])

    def delete_memory(self, memory_id: str) -> list[int]:
        self.store.erasing(self.conn)
        if self.store.erasures is not None:  # ahead of the commit: see .erasures
            self.store.erasures.record_memory(datetime.now().astimezone(), memory_id)
        rows = self.conn.execute("SELECT message_id FROM entries WHERE memory_id = ?", [memory_id])
        ids = [int(r[0]) for r in rows]
        self.delete_entries(memory_id, ids)
        for table in ("tombstones", "jobs"):
            self.conn.execute(f"DELETE FROM {table} WHERE memory_id = ?", [memory_id])
        self.conn.execute("DELETE FROM memories WHERE id = ?", [memory_id])
        return ids

    def insert_entries(
        self,
        entries: Sequence[NewEntry],
        vectors: NDArray[np.float32],
        at: datetime,
        *,
        audit: tuple[str, AuditAction] | None = None,
    ) -> list[int]:
        """Insert entries with their vectors; returns the new message ids in order. The rows
        go in as one batch (:meth:`Backend.insert_entry_rows`) and each memory's accounting
        moves once. ``audit`` (actor, action): one event per entry as well, written in the
        same batch as :meth:`audit_entries` writes them, as soon as the ids are known."""
        check_links(self.conn, [(e.supersedes, e) for e in entries if e.supersedes])
        encode = self.store.encode_vector
        rows = [entry_row(e, encode(v), at) for e, v in zip(entries, vectors, strict=True)]
        events = None
        if audit is not None:
            events = partial(self._audit_each, at, *audit, [e.memory_id for e in entries])
        ids = self.store.insert_entry_rows(self.conn, rows, events) if rows else []
        added: dict[str, tuple[int, int]] = {}
        for e in entries:
            size, count = added.get(e.memory_id, (0, 0))
            added[e.memory_id] = (size + e.size_bytes, count + 1)
        for memory_id in sorted(added):  # row locks in id order, as writers take them
            self._account(memory_id, *added[memory_id])
        self.store.entries_inserted(self.conn, ids, vectors)
        return ids

    def update_entries(self, ids: Sequence[int], changes: dict[str, object]) -> None:
        unknown = set(changes) - ENTRY_FIELDS
        if unknown:
            raise ValueError(f"not entry fields: {sorted(unknown)}")
        if not ids:
            return
        check_relinks(self.conn, ids, changes)
        sets = ", ".join(f"{k} = ?" for k in changes)
        values = [db_value(v) for v in changes.values()]
        self.conn.execute(
            f"UPDATE entries SET {sets} WHERE message_id IN ({marks(len(ids))})",
            [*values, *ids],
        )

    def record_erasure(self, at: datetime, memory_id: str, ids: Sequence[int]) -> None:
        """Enter an erasure in the ledger (:mod:`.erasures`) ahead of the commit; scrub after."""
        self.store.erasing(self.conn)
        if self.store.erasures is not None:
            self.store.erasures.record(at, memory_id, ids)

    def delete_entries(self, memory_id: str, ids: Sequence[int]) -> None:
        """Physically delete entries of one memory, with their keyword-index rows."""
        if not ids:
            return
        for chunk in chunks(ids, 500):
            in_chunk = marks(len(chunk))
            rows = self.conn.execute(
                f"SELECT count(*), coalesce(sum(size_bytes), 0) FROM entries "
                f"WHERE memory_id = ? AND message_id IN ({in_chunk})",
                [memory_id, *chunk],
            )
            self.store.entries_deleting(self.conn, chunk)
            self.conn.execute(f"DELETE FROM evidence WHERE message_id IN ({in_chunk})", chunk)
            self.conn.execute(
                f"DELETE FROM entries WHERE memory_id = ? AND message_id IN ({in_chunk})",
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
            f"INSERT INTO tombstones ({TOMBSTONE_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?)",
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
        action: AuditAction,
        memory_id: str | None,
        message_id: int | None = None,
        reason: str = "",
        before: dict[str, Any] | None = None,
        after: dict[str, Any] | None = None,
    ) -> None:
        self.conn.execute(
            AUDIT_INSERT,
            audit_row(at, actor, action, memory_id, message_id, reason, before, after),
        )

    def audit_entries(
        self,
        *,
        at: datetime,
        actor: str,
        action: AuditAction,
        memory_id: str,
        message_ids: Sequence[int],
    ) -> None:
        """One ``action`` event per entry of ``message_ids``, written as one batch (a
        20,000-turn import wrote 20,000 statements one round trip each)."""
        self._audit_each(at, actor, action, [memory_id] * len(message_ids), message_ids)

    def _audit_each(
        self,
        at: datetime,
        actor: str,
        action: AuditAction,
        memory_ids: Sequence[str],
        message_ids: Sequence[int],
    ) -> None:
        """One ``action`` event per (memory, entry) pair, written as one batch."""
        self.store.insert_audit_rows(
            self.conn,
            [
                audit_row(at, actor, action, memory_id, m, "", None, None)
                for memory_id, m in zip(memory_ids, message_ids, strict=True)
            ],
        )

    # --- jobs -----------------------------------------------------------------------------

    def enqueue_job(
        self,
        *,
        kind: JobKind | str,
        tenant_id: str,
        memory_id: str,
        message_id: int | None,
        at: datetime,
    ) -> int:
        """Queue a job of ``kind`` (the engine's :class:`JobKind`, or a kind a worker was
        given a handler for), due now; returns its id."""
        rows = self.conn.execute(
            f"{JOB_INSERT} RETURNING id", job_row(kind, tenant_id, memory_id, message_id, at)
        )
        return int(rows[0][0])

    def enqueue_jobs(
        self,
        *,
        kind: JobKind | str,
        tenant_id: str,
        memory_id: str,
        message_ids: Sequence[int],
        at: datetime,
    ) -> None:
        """One job of ``kind`` per entry of ``message_ids``, queued as one batch, in order."""
        self.conn.executemany(
            JOB_INSERT, [job_row(kind, tenant_id, memory_id, m, at) for m in message_ids]
        )

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
        for chunk in chunks(message_ids, 500):
            self.conn.execute(f"DELETE FROM jobs WHERE message_id IN ({marks(len(chunk))})", chunk)

    def update_job(self, job_id: int, changes: dict[str, object]) -> None:
        values = [
            json.dumps(v, sort_keys=True) if k == "result" else db_value(v)
            for k, v in changes.items()
        ]
        sets = ", ".join(f"{k} = ?" for k in changes)
        self.conn.execute(f"UPDATE jobs SET {sets} WHERE id = ?", [*values, job_id])

    # --- users and keys -------------------------------------------------------------------

    def insert_user(self, user: User) -> None:
        self.conn.execute(
            f"INSERT INTO users ({USER_COLUMNS}) VALUES (?,?,?,?)",
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
        capabilities: str | None = None,
    ) -> None:
        """A key's row: ``scope`` and ``capabilities`` are JSON lists (None: no limit)."""
        self.conn.execute(
            "INSERT INTO api_keys (id, user_id, key_hash, name, scope, capabilities, created_at) "
            "VALUES (?,?,?,?,?,?,?)",
            [key_id, user_id, key_hash, name, scope, capabilities, to_epoch(at)],
        )

    def revoke_api_key(self, key_id: str, at: datetime) -> bool:
        rows = self.conn.execute(
            "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL RETURNING id",
            [to_epoch(at), key_id],
        )
        return bool(rows)

"""How the store's tables map to models: the columns each query selects, a row decoded into
its model, and a model's values encoded as column values.

Kept in one place so a column is added to the reading and the writing side together; the
queries themselves live in :mod:`.reader` and :mod:`.writer`.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from recallery.clock import from_epoch, to_epoch
from recallery.models import (
    AuditAction,
    AuditEvent,
    Entry,
    EntryType,
    ForgettingPolicy,
    Job,
    JobKind,
    JobState,
    Memory,
    NewEntry,
    Origin,
    Permission,
    Tombstone,
    Trust,
    User,
)
from recallery.store.sql import Row

ENTRY_COLUMNS = (
    "message_id, memory_id, tenant_id, message_type, content, valid_at, recorded_at, user_id, "
    "agent_id, session_id, source_id, invalid_at, retired_at, supersedes, superseded_by, status, "
    "trust, origin, forget_at, last_used_at, use_count, size_bytes"
)
MEMORY_COLUMNS = (
    "id, tenant_id, name, memory_types, embd_id, llm_id, permissions, memory_size, "
    "forgetting_policy, temperature, system_prompt, user_prompt, avatar, description, "
    "storage_type, created_at, updated_at, used_bytes, entry_count, local_model"
)
#: The column :attr:`Memory.local_model` (a migration of each backend), filled in for every
#: @Builtin memory made before as its name resolved then: e5 by its own names, else MiniLM.
ADD_LOCAL_MODEL = (
    "ALTER TABLE memories ADD COLUMN local_model text;\n"
    "UPDATE memories SET local_model = CASE WHEN replace(lower(embd_id), ' ', '') IN "
    "('multilingual-e5-small@builtin', 'intfloat/multilingual-e5-small@builtin') "
    "THEN 'multilingual-e5-small' ELSE 'all-MiniLM-L6-v2' END "
    "WHERE replace(lower(embd_id), ' ', '') LIKE '%@builtin';"
)

JOB_COLUMNS = (
    "id, kind, tenant_id, memory_id, message_id, state, attempts, progress, progress_msg, "
    "outcome, created_at, updated_at, run_after, lease_until, lease_owner, result"
)
AUDIT_COLUMNS = "id, at, actor, action, memory_id, message_id, reason, before, after"

TOMBSTONE_COLUMNS = (
    "message_id, memory_id, tenant_id, message_type, valid_at, recorded_at, erased_at, actor, "
    "reason"
)
USER_COLUMNS = "id, name, is_admin, created_at"

#: The :class:`Memory` attributes in :data:`MEMORY_COLUMNS` order (columns and attributes
#: share their names).
MEMORY_ATTRS = tuple(c.strip() for c in MEMORY_COLUMNS.split(","))


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
        local_model=row[19],
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


def tombstone_from_row(row: Row) -> Tombstone:
    return Tombstone(
        message_id=int(row[0]),
        memory_id=row[1],
        tenant_id=row[2],
        message_type=EntryType(row[3]),
        valid_at=_dt(row[4]),
        recorded_at=_dt(row[5]),
        erased_at=_dt(row[6]),
        actor=row[7],
        reason=row[8],
    )


def user_from_row(row: Row) -> User:
    return User(id=row[0], name=row[1], is_admin=bool(row[2]), created_at=_dt(row[3]))


def db_value(value: object) -> object:
    """A model value as the column stores it (epoch seconds, 0/1, enum values, type flags)."""
    if isinstance(value, datetime):
        return to_epoch(value)
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (Trust, Permission, ForgettingPolicy, EntryType, Origin, JobState)):
        return value.value
    if isinstance(value, tuple) and all(isinstance(v, EntryType) for v in value):
        return sum(v.flag for v in value)
    return value


# An audit event and a queued job as column values: one statement writes one row or a batch.
#: An audit event's written columns, in :func:`audit_row`'s order.
AUDIT_WRITTEN = ("at", "actor", "action", "memory_id", "message_id", "reason", "before", "after")
AUDIT_INSERT = f"INSERT INTO audit ({', '.join(AUDIT_WRITTEN)}) VALUES (?,?,?,?,?,?,?,?)"
JOB_INSERT = (
    "INSERT INTO jobs (kind, tenant_id, memory_id, message_id, state, attempts, progress, "
    "progress_msg, created_at, updated_at, run_after) VALUES (?,?,?,?,?,0,0,?,?,?,?)"
)


def entry_row(e: NewEntry, vector: object, at: datetime) -> tuple[object, ...]:
    """A new entry's column values, recorded ``at``, in
    :data:`~recallery.store.backend.ENTRY_INSERT_COLUMNS` order; ``vector`` as the store
    encodes it."""
    invalid_at = None if e.invalid_at is None else to_epoch(e.invalid_at)
    return (e.memory_id, e.tenant_id, e.message_type.value, e.content, vector,
            to_epoch(e.valid_at), to_epoch(at), e.user_id, e.agent_id, e.session_id,
            e.source_id, invalid_at, e.supersedes, int(e.status), e.trust.value,
            e.origin.value, 0, e.size_bytes)  # fmt: skip


def audit_row(
    at: datetime,
    actor: str,
    action: AuditAction,
    memory_id: str | None,
    message_id: int | None,
    reason: str,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
) -> list[object]:
    """An audit event's column values, in :data:`AUDIT_INSERT`'s order."""
    return [
        to_epoch(at),
        actor,
        str(action),
        memory_id,
        message_id,
        reason,
        _json_object(before),
        _json_object(after),
    ]


def _json_object(value: dict[str, Any] | None) -> str:
    """An audit side as JSON text; most events have none (a 20,000-turn import's adds)."""
    return json.dumps(value, sort_keys=True, default=str) if value else "{}"


def job_row(
    kind: JobKind | str, tenant_id: str, memory_id: str, message_id: int | None, at: datetime
) -> list[object]:
    """A queued job's column values, in :data:`JOB_INSERT`'s order: due at ``at``."""
    stamp = at.strftime("%Y-%m-%d %H:%M:%S")
    epoch = to_epoch(at)
    queued = JobState.QUEUED.value
    return [
        str(kind),
        tenant_id,
        memory_id,
        message_id,
        queued,
        f"{stamp} Task has been received.",
        epoch,
        epoch,
        epoch,
    ]

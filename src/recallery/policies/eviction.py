"""Making room: the eviction plan of :mod:`recallery.policies.capacity` carried out inside the
caller's write transaction, with a tombstone and an audit event per removed entry.

Every write that adds bytes (a turn, a correction, an extraction) calls :func:`make_room`
under the memory's row lock, so budgets stay exact under concurrent writers. Erasure shares
:func:`delete_with_tombstones`: both remove rows for good and leave only their tombstones.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from recallery.models import AuditAction, Memory, Scope, Tombstone
from recallery.policies.capacity import plan_eviction
from recallery.store.writer import Writer

#: Eviction candidates are read at least this many at a time.
EVICTION_BATCH = 512


def make_room(
    w: Writer,
    memory: Memory,
    incoming: int,
    now: datetime,
    protected: frozenset[int] = frozenset(),
) -> None:
    """Evict by the memory's policy so ``incoming`` bytes fit; raises CapacityExceeded when
    they cannot. ``protected`` entries (the turn being extracted, a correction's original)
    are never chosen."""
    if memory.used_bytes + incoming <= memory.memory_size:
        return
    candidates = w.eviction_candidates(
        memory.id, memory.forgetting_policy, max(EVICTION_BATCH, memory.entry_count)
    )
    plan = plan_eviction(
        budget=memory.memory_size,
        used=memory.used_bytes,
        incoming=incoming,
        candidates=candidates,
        protected=protected,
    )
    actor = f"policy:{memory.forgetting_policy.value}"
    delete_with_tombstones(w, memory.id, plan.evict, now, actor, "evicted", AuditAction.ENTRY_EVICT)


def delete_with_tombstones(
    w: Writer,
    memory_id: str,
    ids: Sequence[int],
    now: datetime,
    actor: str,
    reason: str,
    action: AuditAction,
) -> list[int]:
    """Delete entries for good, leaving a tombstone and an audit event for each and
    cancelling their jobs; returns the ids removed, ascending."""
    entries = w.get_entries(Scope.of(memory_id), ids)
    gone = sorted(entries)
    if action is not AuditAction.ENTRY_EVICT:
        w.record_erasure(now, memory_id, gone)
    w.add_tombstones(
        [
            Tombstone(
                message_id=e.message_id,
                memory_id=e.memory_id,
                tenant_id=e.tenant_id,
                message_type=e.message_type,
                valid_at=e.valid_at,
                recorded_at=e.recorded_at,
                erased_at=now,
                actor=actor,
                reason=reason,
            )
            for e in (entries[i] for i in gone)
        ]
    )
    w.delete_entries(memory_id, gone)
    w.cancel_jobs(gone)
    for mid in gone:
        w.audit(
            at=now,
            actor=actor,
            action=action,
            memory_id=memory_id,
            message_id=mid,
            reason=reason,
        )
    return gone


__all__ = ["EVICTION_BATCH", "delete_with_tombstones", "make_room"]

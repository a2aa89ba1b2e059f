"""A bulk change as a plan: which entries it changes (cascades included), computed once from
the store's state, then either reported (a dry run) or applied as computed, inside one
transaction, so that what a dry run says is what applying does, and a change is all or nothing.

Each action keeps the rules of its single operation (:mod:`recallery.services.lifecycle`):
disabling, enabling, forgetting and restoring a raw turn applies to the current entries
extracted from it; erasing takes every version and extract; an entry already in the wanted
state is not changed and not counted. One audit event per changed entry.

A verdict (confirm, reject) on a raw turn is a verdict on what was extracted from it too: a
curator selects turns on the Messages page and means their facts, so the current extracts
are reviewed with the turn (the reason given is each one's reason).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from recallery.audit import summary
from recallery.models import AuditAction, Entry, EntryType, Principal, Scope, Trust
from recallery.policies.eviction import delete_with_tombstones
from recallery.requests import BulkAction
from recallery.services.lifecycle import VERDICTS, erasure_set
from recallery.store.filters import EntryFilter
from recallery.store.reader import Reader
from recallery.store.writer import Writer

#: The field each cascading action sets, and the audit action it writes.
_SETS: dict[BulkAction, tuple[str, AuditAction]] = {
    BulkAction.DISABLE: ("status", AuditAction.ENTRY_DISABLE),
    BulkAction.ENABLE: ("status", AuditAction.ENTRY_ENABLE),
    BulkAction.FORGET: ("forget_at", AuditAction.ENTRY_FORGET),
    BulkAction.RESTORE: ("forget_at", AuditAction.ENTRY_RESTORE),
}
_VERDICT = {BulkAction.CONFIRM: Trust.CONFIRMED, BulkAction.REJECT: Trust.REJECTED}


@dataclass(frozen=True)
class Plan:
    """What a bulk change of ``selected`` does: ``changes`` maps each entry it changes to the
    selected entry it changes with (itself, or the turn or version it cascades from)."""

    action: BulkAction
    selected: tuple[int, ...]
    changes: dict[int, int]
    entries: dict[int, Entry]

    @property
    def token(self) -> str:
        """A digest of the selection and the change set: apply with it to change exactly what
        the dry run reported, or nothing."""
        return token(self.action, self.selected, self.changes)


def token(
    action: BulkAction, selected: Sequence[int], changes: Sequence[int] | dict[int, int]
) -> str:
    ids, changed = ",".join(map(str, sorted(selected))), ",".join(map(str, sorted(changes)))
    text = f"{action.value}|{ids}|{changed}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def plan(r: Reader, scope: Scope, action: BulkAction, selected: Sequence[int]) -> Plan:
    """The entries ``action`` changes when applied to ``selected`` (ids of ``scope``, each
    known to exist) in ``r``'s state."""
    chosen = r.get_entries(scope, selected)
    if action is BulkAction.ERASE:
        changes: dict[int, int] = {}
        for eid in selected:
            if eid not in changes:
                for gone in erasure_set(r, scope, chosen[eid]):
                    changes.setdefault(gone, eid)
        return Plan(action, tuple(selected), changes, chosen)
    wants = _wants(action)
    every = dict(chosen)
    changes = {i: i for i in selected if wants(chosen[i])}
    raws = frozenset(i for i in selected if chosen[i].message_type is EntryType.RAW)
    if raws:
        children, _ = r.entries(scope, EntryFilter(source_ids=raws), limit=10**9)
        for child in sorted(children, key=lambda e: e.message_id):
            every.setdefault(child.message_id, child)
            if wants(child) and child.source_id is not None:
                changes.setdefault(child.message_id, child.source_id)
    return Plan(action, tuple(selected), changes, every)


def apply(w: Writer, actor: Principal, p: Plan, now: datetime, reason: str) -> list[int]:
    """Carry out ``p`` in ``w``'s transaction; the ids changed, ascending."""
    ids = sorted(p.changes)
    if not ids:
        return []
    # an erasure's changes hold versions and extracts the plan did not read: name the memory
    # by an entry it did read (every change comes from a selected entry, all of one memory)
    memory_id = p.entries[p.changes[ids[0]]].memory_id
    if p.action is BulkAction.ERASE:
        why = reason or "erased"
        return delete_with_tombstones(
            w, memory_id, ids, now, actor.user_id, why, AuditAction.ENTRY_ERASE
        )
    value: object
    if p.action in _VERDICT:
        field, value, event = "trust", _VERDICT[p.action], VERDICTS[_VERDICT[p.action]]
    else:
        field, event = _SETS[p.action]
        value = _value(p.action, now)
    w.update_entries(ids, {field: value})
    for i in ids:
        origin = p.changes[i]
        w.audit(
            at=now,
            actor=actor.user_id,
            action=event,
            memory_id=memory_id,
            message_id=i,
            reason=reason if p.action in _VERDICT else _cascade_reason(i, origin),
            before={field: summary(getattr(p.entries[i], field))},
            after={field: summary(value)},
        )
    return ids


def _cascade_reason(message_id: int, origin: int) -> str:
    return "" if message_id == origin else f"cascade from message {origin}"


def _value(action: BulkAction, now: datetime) -> object:
    return {
        BulkAction.DISABLE: False,
        BulkAction.ENABLE: True,
        BulkAction.FORGET: now,
        BulkAction.RESTORE: None,
    }[action]


def _wants(action: BulkAction) -> Callable[[Entry], bool]:
    """Whether ``action`` changes an entry (one already as asked is left alone)."""
    if action in _VERDICT:
        verdict = _VERDICT[action]
        return lambda e: e.trust is not verdict
    if action is BulkAction.DISABLE:
        return lambda e: e.status
    if action is BulkAction.ENABLE:
        return lambda e: not e.status
    if action is BulkAction.FORGET:
        return lambda e: e.forget_at is None
    return lambda e: e.forget_at is not None

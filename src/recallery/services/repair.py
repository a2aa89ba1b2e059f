"""Repair for stores written before facts were kept per person: version links that join two
people's entries (one user's fact "superseded" by another's) are found, reported, and on
request undone, each older entry current again, every change audited with the reason.

Invariant 7 (:mod:`recallery.ownership`) stops new links of that kind at every path and in
the store itself; this undoes the ones an earlier release wrote. The docs' upgrade notes say to
run it once (``recallery repair-links``, a dry run unless ``--apply``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from recallery import validation as v
from recallery.access import Action, authorised, decide, require_admin
from recallery.audit import summary
from recallery.clock import Clock
from recallery.models import AuditAction, Entry, Memory, Principal, Scope
from recallery.ownership import named
from recallery.services.lifecycle import reopened_end
from recallery.services.memories import visible_memories
from recallery.store.base import Store
from recallery.store.reader import Reader
from recallery.store.writer import Writer


@dataclass(frozen=True)
class CrossedLink:
    """One version link between two people: ``older`` (retired by it, or not) and ``newer``."""

    memory_id: str
    older: int
    older_user: str
    newer: int
    newer_user: str
    reinstated: bool
    """Whether undoing it makes ``older`` current again (it was retired by this link)."""

    def line(self) -> str:
        again = "; it becomes current again" if self.reinstated else ""
        return (
            f"memory {self.memory_id}: message {self.older} ({named(self.older_user)}) was "
            f"linked as replaced by message {self.newer} ({named(self.newer_user)}){again}"
        )


@dataclass(frozen=True)
class RepairReport:
    """What a repair found and (unless ``dry_run``) undid."""

    dry_run: bool
    links: tuple[CrossedLink, ...]
    at: datetime
    reason: str


class RepairService:
    """Find and undo version links across people in the memories the caller may review."""

    def __init__(self, store: Store, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    def repair_links(
        self,
        actor: Principal,
        *,
        dry_run: object = True,
        reason: str = "",
        everywhere: object = False,
    ) -> RepairReport:
        dry = v.boolean(dry_run, "dry_run")
        wide = v.boolean(everywhere, "everywhere")
        if wide:
            require_admin(actor, "repair links in every tenant")
        why = v.text(reason, "reason", limit=1024) or "version link across users undone"
        with self.store.read() as r:
            memories = _reviewable(r, actor, wide)
            if dry:
                return RepairReport(True, tuple(_found(r, memories)), self.clock.now(), why)
        now = self.clock.now()
        with self.store.write() as w:
            for m in memories:
                locked = w.lock_memory(m.id)
                if locked is not None and not wide:
                    authorised(actor, Action.REVIEW, locked, m.id)
            links = _found(w, memories)
            for link in links:
                _undo(w, link, now, actor.user_id, why)
        return RepairReport(False, tuple(links), now, why)


def _reviewable(r: Reader, actor: Principal, wide: bool) -> list[Memory]:
    if wide:
        return r.every_memory()
    found = visible_memories(r, actor, "everywhere")
    return sorted((m for m in found if decide(actor, Action.REVIEW, m)), key=lambda m: m.id)


def _found(r: Reader, memories: list[Memory]) -> list[CrossedLink]:
    pairs = r.crossed_links([m.id for m in memories])
    ids = {i for pair in pairs for i in pair}
    scope = Scope(frozenset(m.id for m in memories))
    entries = r.get_entries(scope, ids)
    out = []
    for older_id, newer_id in pairs:
        older, newer = entries.get(older_id), entries.get(newer_id)
        if older is None or newer is None:
            continue
        retired = older.superseded_by == newer_id and older.retired_at is not None
        out.append(
            CrossedLink(older.memory_id, older_id, older.user_id, newer_id, newer.user_id, retired)
        )
    return out


def _undo(w: Writer, link: CrossedLink, now: datetime, actor: str, reason: str) -> None:
    scope = Scope.of(link.memory_id)
    found = w.get_entries(scope, [link.older, link.newer])
    older, newer = found[link.older], found[link.newer]
    if older.superseded_by == newer.message_id:
        changes: dict[str, object] = {"superseded_by": None}
        if link.reinstated:
            changes |= {"retired_at": None, "invalid_at": reopened_end(older, newer)}
        _change(
            w,
            older,
            changes,
            AuditAction.ENTRY_REINSTATE if link.reinstated else AuditAction.ENTRY_UNLINK,
            now,
            actor,
            reason,
        )
    if newer.supersedes == older.message_id:
        _change(w, newer, {"supersedes": None}, AuditAction.ENTRY_UNLINK, now, actor, reason)


def _change(
    w: Writer,
    e: Entry,
    changes: dict[str, object],
    action: AuditAction,
    now: datetime,
    actor: str,
    reason: str,
) -> None:
    w.update_entries([e.message_id], changes)
    w.audit(
        at=now,
        actor=actor,
        action=action,
        memory_id=e.memory_id,
        message_id=e.message_id,
        reason=reason,
        before={k: summary(getattr(e, k)) for k in changes},
        after={k: summary(x) for k, x in changes.items()},
    )


__all__ = ["CrossedLink", "RepairReport", "RepairService"]

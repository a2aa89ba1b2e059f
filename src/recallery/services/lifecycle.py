"""The lifecycle of an entry: enable, forget and restore (cascading from a raw turn to what
was extracted from it), review, correct (a new version; the old one retired) and erase (a hard
delete of the entry, its versions and extracts, with a receipt)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from recallery import validation as v
from recallery.access import Action, authorised, decide
from recallery.audit import summary
from recallery.clock import Clock
from recallery.errors import Conflict
from recallery.models import (
    AuditAction,
    Entry,
    EntryType,
    EraseReceipt,
    Memory,
    NewEntry,
    Origin,
    Principal,
    Scope,
    Trust,
)
from recallery.ownership import check_link
from recallery.policies.capacity import entry_size
from recallery.policies.eviction import make_room
from recallery.providers.registry import ModelRegistry
from recallery.requests import BulkAction
from recallery.services import changes
from recallery.services.entries import existing, versions
from recallery.store.base import Store


class LifecycleService:
    """State changes of entries, each with exactly one audit event per entry it touches."""

    def __init__(self, store: Store, models: ModelRegistry, clock: Clock) -> None:
        self.store = store
        self.models = models
        self.clock = clock

    def set_status(
        self, actor: Principal, memory_id: object, message_id: object, enabled: object
    ) -> list[int]:
        """Enable or disable an entry; disabling a raw entry disables what came from it."""
        flag = v.boolean(enabled, "status", "Status must be a boolean.")
        kind = BulkAction.ENABLE if flag else BulkAction.DISABLE
        return self._cascade_update(actor, memory_id, message_id, kind)

    def forget(self, actor: Principal, memory_id: object, message_id: object) -> list[int]:
        """Soft-forget an entry (and what was extracted from it): hidden, evicted first."""
        return self._cascade_update(actor, memory_id, message_id, BulkAction.FORGET)

    def restore(self, actor: Principal, memory_id: object, message_id: object) -> list[int]:
        return self._cascade_update(actor, memory_id, message_id, BulkAction.RESTORE)

    def review(
        self,
        actor: Principal,
        memory_id: object,
        message_id: object,
        verdict: object,
        reason: str = "",
    ) -> Entry:
        """Confirm or reject an entry (every verdict is an audit event, a repeated one too).
        The entry comes back whole only to a caller who may read it."""
        trust = v.trust_verdict(verdict)
        mid, eid = v.memory_id(memory_id), v.message_id(message_id)
        now = self.clock.now()
        with self.store.write() as w:
            memory = authorised(actor, Action.REVIEW, w.lock_memory(mid), mid)
            entry = existing(w.entry(Scope.of(mid), eid), memory.id, eid)
            if entry.trust is not trust:
                w.update_entries([eid], {"trust": trust})
            w.audit(  # a second verdict is recorded too: who vouched is in the log
                at=now,
                actor=actor.user_id,
                action=VERDICTS[trust],
                memory_id=mid,
                message_id=eid,
                reason=reason,
                before={"trust": entry.trust.value},
                after={"trust": trust.value},
            )
        return answer(actor, memory, replace(entry, trust=trust))

    def correct(
        self,
        actor: Principal,
        memory_id: object,
        message_id: object,
        content: object,
        *,
        reason: str = "",
        valid_at: object = None,
    ) -> Entry:
        """Write a new version of an entry; the old one is retired and stays in its history."""
        text = v.text(content, "content", empty=False)
        mid, eid = v.memory_id(memory_id), v.message_id(message_id)
        new_valid = v.optional_timestamp(valid_at, "valid_at")
        with self.store.read() as r:
            memory = authorised(actor, Action.WRITE, r.memory(mid), mid)
        vector = self.models.embedder(memory.model_id).embed([text])
        now = self.clock.now()
        with self.store.write() as w:
            locked = authorised(actor, Action.WRITE, w.lock_memory(mid), mid)
            scope = Scope.of(mid)
            old = existing(w.entry(scope, eid), mid, eid)
            if old.retired_at is not None:
                raise Conflict(
                    f"Message '{eid}' is not current (it was replaced by '{old.superseded_by}')."
                )
            size = entry_size(text, vector.shape[1])
            make_room(w, locked, size, now, protected=frozenset({eid}))
            verdict = corrected_trust(actor, locked, old)
            new = NewEntry(
                memory_id=mid,
                tenant_id=old.tenant_id,
                message_type=old.message_type,
                content=text,
                valid_at=new_valid or old.valid_at,
                size_bytes=size,
                user_id=old.user_id,
                agent_id=old.agent_id,
                session_id=old.session_id,
                source_id=old.source_id,
                invalid_at=old.invalid_at,
                supersedes=eid,
                origin=Origin.CORRECTION,
                status=old.status,
                trust=verdict,
            )
            (new_id,) = w.insert_entries([new], vector, now)
            w.update_entries([eid], {"retired_at": now, "superseded_by": new_id})
            w.audit(
                at=now,
                actor=actor.user_id,
                action=AuditAction.ENTRY_RETIRE,
                memory_id=mid,
                message_id=eid,
                reason=reason,
                after={"superseded_by": new_id},
            )
            w.audit(
                at=now,
                actor=actor.user_id,
                action=AuditAction.ENTRY_CORRECT,
                memory_id=mid,
                message_id=new_id,
                reason=reason,
                after={"supersedes": eid, "trust": verdict.value},
            )
            created = w.entry(scope, new_id)
        assert created is not None
        return answer(actor, locked, created)

    def reinstate(
        self, actor: Principal, memory_id: object, message_id: object, reason: object
    ) -> Entry:
        """Make a retired version current again (a supersession or correction judged wrong):
        the current version of its chain is retired in its place, linked to it, and the
        validity supersession closed is reopened. The reinstated version keeps its link to
        the version that had replaced it, so the history reads the same from either end.
        One audit event per changed entry, each with the (required) reason."""
        mid, eid = v.memory_id(memory_id), v.message_id(message_id)
        why = v.text(reason, "reason", empty=False)
        now = self.clock.now()
        with self.store.write() as w:
            memory = authorised(actor, Action.REVIEW, w.lock_memory(mid), mid)
            scope = Scope.of(mid)
            old = existing(w.entry(scope, eid), mid, eid)
            if old.retired_at is None:
                raise Conflict(f"Message '{eid}' is current already; only a retired one is.")
            heads = [e for e in versions(w, scope, old) if e.retired_at is None]
            successor = w.entry(scope, old.superseded_by) if old.superseded_by else None
            for other in [*heads, *([successor] if successor else [])]:
                check_link(old, other, "reinstate across")
            changes: dict[str, object] = {
                "retired_at": None,
                "invalid_at": reopened_end(old, successor),
            }
            w.update_entries([eid], changes)
            before = {"retired_at": old.retired_at, "invalid_at": old.invalid_at}
            w.audit(
                at=now,
                actor=actor.user_id,
                action=AuditAction.ENTRY_REINSTATE,
                memory_id=mid,
                message_id=eid,
                reason=why,
                before={k: summary(x) for k, x in before.items()},
                after={k: summary(x) for k, x in changes.items()},
            )
            for head in heads:
                w.update_entries([head.message_id], {"retired_at": now, "superseded_by": eid})
                w.audit(
                    at=now,
                    actor=actor.user_id,
                    action=AuditAction.ENTRY_RETIRE,
                    memory_id=mid,
                    message_id=head.message_id,
                    reason=why,
                    before={"retired_at": None, "superseded_by": head.superseded_by},
                    after={"retired_at": summary(now), "superseded_by": eid},
                )
            back = w.entry(scope, eid)
        assert back is not None
        return answer(actor, memory, back)

    def erase(
        self, actor: Principal, memory_id: object, message_id: object, *, reason: str = ""
    ) -> EraseReceipt:
        """Hard-delete an entry, every version of it and everything extracted from them (the
        same person's only: :mod:`recallery.ownership`)."""
        mid, eid = v.memory_id(memory_id), v.message_id(message_id)
        now = self.clock.now()
        with self.store.write() as w:
            memory = authorised(actor, Action.ERASE, w.lock_memory(mid), mid)
            scope = Scope.of(mid)
            existing(w.entry(scope, eid), memory.id, eid)
            plan = changes.plan(w, scope, BulkAction.ERASE, [eid])
            gone = changes.apply(w, actor, plan, now, reason)
        clean = self.store.scrub()  # the store scrubbed on commit; this says whether it could
        return EraseReceipt(mid, eid, tuple(gone), now, actor.user_id, reason or "erased", clean)

    def _cascade_update(
        self, actor: Principal, memory_id: object, message_id: object, kind: BulkAction
    ) -> list[int]:
        """One entry's change, cascading from a raw turn to its extracts
        (:mod:`recallery.services.changes`)."""
        mid, eid = v.memory_id(memory_id), v.message_id(message_id)
        now = self.clock.now()
        with self.store.write() as w:
            memory = authorised(actor, Action.WRITE, w.lock_memory(mid), mid)
            scope = Scope.of(mid)
            existing(w.entry(scope, eid), memory.id, eid)
            return changes.apply(w, actor, changes.plan(w, scope, kind, [eid]), now, "")


def answer(actor: Principal, memory: Memory, entry: Entry) -> Entry:
    """``entry`` as an answer to ``actor``: whole to a caller who may read ``memory``; to a
    key without ``read``, only its ids, type, state and times (no content, no provenance)."""
    if decide(actor, Action.READ, memory):
        return entry
    return replace(entry, content="", user_id="", agent_id="", session_id="")


def reopened_end(old: Entry, successor: Entry | None) -> datetime | None:
    """``old``'s end once reinstated: the end supersession gave it (when its successor began)
    is undone; an end it had of its own stays."""
    if successor is None or old.invalid_at is None:
        return old.invalid_at
    closed = max(successor.valid_at, old.valid_at)
    return None if old.invalid_at == closed else old.invalid_at


#: The audit action of each review verdict.
VERDICTS = {Trust.CONFIRMED: AuditAction.ENTRY_CONFIRM, Trust.REJECTED: AuditAction.ENTRY_REJECT}


def corrected_trust(actor: Principal, memory: Memory, old: Entry) -> Trust:
    """The trust of a correction: a fact corrected by someone who may give verdicts comes
    back confirmed (their edit is their verdict); anyone else's stays unreviewed, and a raw
    turn, which is never reviewed, keeps its own."""
    if old.message_type is EntryType.RAW:
        return old.trust
    return Trust.CONFIRMED if decide(actor, Action.REVIEW, memory) else Trust.UNREVIEWED

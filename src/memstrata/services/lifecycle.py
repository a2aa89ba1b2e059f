"""The lifecycle of an entry: enable, forget, review, correct, erase."""

from __future__ import annotations

from dataclasses import replace

from memstrata import validation as v
from memstrata.access import Action
from memstrata.errors import Conflict
from memstrata.facade.core import (
    EngineCore,
)
from memstrata.models import (
    Entry,
    EraseReceipt,
    NewEntry,
    Origin,
    Principal,
    Scope,
)
from memstrata.policies.capacity import entry_size
from memstrata.store.base import Writer
from memstrata.store.filters import EntryFilter


class Lifecycle(EngineCore):
    def set_status(
        self, actor: Principal, memory_id: object, message_id: object, enabled: object
    ) -> list[int]:
        """Enable or disable an entry; disabling a raw entry disables what came from it."""
        flag = v.boolean(enabled, "status", "Status must be a boolean.")
        return self._cascade_update(
            actor,
            memory_id,
            message_id,
            Action.WRITE,
            "entry.enable" if flag else "entry.disable",
            {"status": flag},
        )

    def forget(self, actor: Principal, memory_id: object, message_id: object) -> list[int]:
        """Soft-forget an entry (and what was extracted from it): hidden, evicted first."""
        return self._cascade_update(
            actor,
            memory_id,
            message_id,
            Action.WRITE,
            "entry.forget",
            {"forget_at": self.clock.now()},
            skip=lambda e: e.forget_at is not None,
        )

    def restore(self, actor: Principal, memory_id: object, message_id: object) -> list[int]:
        return self._cascade_update(
            actor,
            memory_id,
            message_id,
            Action.WRITE,
            "entry.restore",
            {"forget_at": None},
            skip=lambda e: e.forget_at is None,
        )

    def review(
        self,
        actor: Principal,
        memory_id: object,
        message_id: object,
        verdict: object,
        reason: str = "",
    ) -> Entry:
        trust = v.trust_verdict(verdict)
        mid, eid = v.memory_id(memory_id), v.message_id(message_id)
        now = self.clock.now()
        with self.store.write() as w:
            memory = self._authorised(w.lock_memory(mid), actor, Action.REVIEW, mid)
            entry = self._entry(w.entry(Scope(frozenset({mid})), eid), memory, eid)
            if entry.trust is not trust:
                w.update_entries([eid], {"trust": trust})
                w.audit(
                    at=now,
                    actor=actor.user_id,
                    action=f"entry.{trust.value[:-2]}",
                    memory_id=mid,
                    message_id=eid,
                    reason=reason,
                    before={"trust": entry.trust.value},
                    after={"trust": trust.value},
                )
        return replace(entry, trust=trust)

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
            memory = self._authorised(r.memory(mid), actor, Action.WRITE, mid)
        vector = self.embedder(memory).embed([text])
        now = self.clock.now()
        with self.store.write() as w:
            locked = self._authorised(w.lock_memory(mid), actor, Action.WRITE, mid)
            scope = Scope(frozenset({mid}))
            old = self._entry(w.entry(scope, eid), locked, eid)
            if old.retired_at is not None:
                raise Conflict(
                    f"Message '{eid}' is not current (it was replaced by '{old.superseded_by}')."
                )
            size = entry_size(text, vector.shape[1])
            self.make_room(w, locked, size, now, protected=frozenset({eid}))
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
            )
            (new_id,) = w.insert_entries([new], vector, now)
            w.update_entries([eid], {"retired_at": now, "superseded_by": new_id})
            w.audit(
                at=now,
                actor=actor.user_id,
                action="entry.retire",
                memory_id=mid,
                message_id=eid,
                reason=reason,
                after={"superseded_by": new_id},
            )
            w.audit(
                at=now,
                actor=actor.user_id,
                action="entry.correct",
                memory_id=mid,
                message_id=new_id,
                reason=reason,
                after={"supersedes": eid},
            )
            created = w.entry(scope, new_id)
        assert created is not None
        return created

    def erase(
        self, actor: Principal, memory_id: object, message_id: object, *, reason: str = ""
    ) -> EraseReceipt:
        """Hard-delete an entry, every version of it and everything extracted from them."""
        mid, eid = v.memory_id(memory_id), v.message_id(message_id)
        now = self.clock.now()
        with self.store.write() as w:
            memory = self._authorised(w.lock_memory(mid), actor, Action.ERASE, mid)
            scope = Scope(frozenset({mid}))
            start = self._entry(w.entry(scope, eid), memory, eid)
            doomed = self._erasure_set(w, scope, start)
            gone = self._delete_with_tombstones(
                w, mid, sorted(doomed), now, actor.user_id, reason or "erased", "entry.erase"
            )
        self.store.scrub()
        return EraseReceipt(mid, eid, tuple(gone), now, actor.user_id, reason or "erased")

    def _erasure_set(self, w: Writer, scope: Scope, start: Entry) -> set[int]:
        doomed: set[int] = set()
        frontier = [start]
        while frontier:
            entry = frontier.pop()
            if entry.message_id in doomed:
                continue
            doomed.add(entry.message_id)
            frontier.extend(self._chain(w, scope, entry))
            children, _ = w.entries(
                scope,
                EntryFilter(source_ids=frozenset({entry.message_id}), current_only=False),
                limit=100_000,
            )
            frontier.extend(children)
        return doomed

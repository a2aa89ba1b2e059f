"""Audit log, jobs and extraction costs."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from memstrata import transfer
from memstrata import validation as v
from memstrata.access import Action
from memstrata.errors import InvalidInput
from memstrata.extraction.costs import ExtractionCosts, summarise
from memstrata.facade.core import (
    EXTRACTION_JOB,
    TurnInput,
    _job_state,
)
from memstrata.facade.entries import Entries
from memstrata.facade.lifecycle import Lifecycle
from memstrata.facade.memories import Memories
from memstrata.models import (
    AuditEvent,
    Job,
    Page,
    Principal,
    Scope,
)
from memstrata.store.base import AuditQuery
from memstrata.store.filters import EntryFilter


class Operations(Memories, Entries, Lifecycle):
    def audit_log(
        self,
        actor: Principal,
        *,
        memory_id: object = None,
        message_id: object = None,
        actor_id: str | None = None,
        action: str | None = None,
        since: object = None,
        until: object = None,
        limit: int = 100,
        offset: int = 0,
    ) -> Page[AuditEvent]:
        """Audit events of memories the caller can read (all events for an admin)."""
        if memory_id is not None:
            ids: frozenset[str] | None = frozenset({self.get_memory(actor, memory_id).id})
        elif actor.is_admin and actor.scope is None:
            ids = None
        else:
            page = self.list_memories(actor, page_size=10_000)
            ids = frozenset(m.id for m in page.items)
        query = AuditQuery(
            memory_ids=ids,
            message_id=None if message_id is None else v.message_id(message_id),
            actor=actor_id,
            action=action,
            since=v.optional_timestamp(since, "since"),
            until=v.optional_timestamp(until, "until"),
            limit=limit,
            offset=offset,
        )
        with self.store.read() as r:
            events, total = r.audit_events(query)
        return Page(tuple(events), total)

    def extraction_costs(self, actor: Principal, memory_id: object) -> ExtractionCosts:
        """Model calls, tokens and latency of a memory's extraction jobs, and their outcomes."""
        mid = v.memory_id(memory_id)
        with self.store.read() as r:
            self._authorised(r.memory(mid), actor, Action.READ, mid)
            found = r.jobs(frozenset({mid}))
        return summarise(mid, [j for j in found if j.kind == EXTRACTION_JOB])

    def jobs(
        self,
        actor: Principal,
        memory_id: object,
        *,
        state: object = None,
        page: int = 1,
        page_size: int = 30,
    ) -> Page[Job]:
        """Background jobs of a memory, newest first (RAGFlow shows them as tasks)."""
        mid = v.memory_id(memory_id)
        wanted = None if state is None else _job_state(state)
        with self.store.read() as r:
            self._authorised(r.memory(mid), actor, Action.READ, mid)
            found = r.jobs(frozenset({mid}), wanted)
        newest = found[::-1]
        start = (page - 1) * page_size
        return Page(tuple(newest[start : start + page_size]), len(found))

    def export_memory(self, actor: Principal, memory_id: object) -> list[dict[str, Any]]:
        """A memory as JSONL records (:mod:`memstrata.transfer`): its configuration, then
        every current entry, raw and extracted, with its times, type and source id."""
        mid = v.memory_id(memory_id)
        with self.store.read() as r:
            memory = self._authorised(r.memory(mid), actor, Action.READ, mid)
            entries, _ = r.entries(
                Scope(frozenset({mid})), EntryFilter(), limit=max(memory.entry_count, 1)
            )
        return transfer.export_records(memory, entries, self.clock.now())

    def import_memory(
        self, actor: Principal, memory_id: object | None, records: Iterable[object]
    ) -> transfer.ImportReport:
        """Write an export's raw turns into a memory (a new one, from the file's header, when
        ``memory_id`` is None), keeping their conversation times and enable/forget state."""
        plan = transfer.plan_import(records)
        if memory_id is None:
            if plan.memory is None:
                raise InvalidInput("records", "a new memory needs the export's header record.")
            memory = self.create_memory(actor, **transfer.memory_arguments(plan.memory))
        else:
            memory = self.get_memory(actor, memory_id)
        if not plan.turns:
            return transfer.ImportReport(memory.id, 0, skipped_extracted=plan.skipped_extracted)
        turns = [
            TurnInput(t.content, t.user_id, t.agent_id, t.session_id, t.valid_at)
            for t in plan.turns
        ]
        written = self.add_messages(actor, [memory.id], turns)
        for turn, entry in zip(plan.turns, written, strict=True):
            if not turn.enabled:
                self.set_status(actor, memory.id, entry.message_id, False)
            if turn.forgotten:
                self.forget(actor, memory.id, entry.message_id)
        return transfer.ImportReport(
            memory_id=memory.id,
            imported=len(written),
            id_map={
                t.old_id: e.message_id
                for t, e in zip(plan.turns, written, strict=True)
                if t.old_id is not None
            },
            skipped_extracted=plan.skipped_extracted,
            disabled=sum(not t.enabled for t in plan.turns),
            forgotten=sum(t.forgotten for t in plan.turns),
        )

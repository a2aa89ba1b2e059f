"""What happened in memories: the audit log, background jobs (RAGFlow's task view) and what
extraction cost."""

from __future__ import annotations

from dataclasses import dataclass

from recallery import validation as v
from recallery.access import Action, authorised
from recallery.errors import NotFound
from recallery.extraction.costs import ExtractionCosts, summarise
from recallery.models import AuditAction, AuditEvent, Job, JobKind, Page, Principal, Tombstone
from recallery.services.memories import MemoryService
from recallery.store.base import Store
from recallery.store.queries import AuditQuery

#: Job kinds whose results hold model usage.
_METERED = frozenset({JobKind.EXTRACTION, JobKind.STATEMENT})
#: The audit events that leave a tombstone.
_GONE = frozenset({AuditAction.ENTRY_ERASE.value, AuditAction.ENTRY_EVICT.value})


@dataclass(frozen=True)
class ErasedEntry:
    """What is left of an erased (or evicted) entry: its tombstone, the entries erased with it
    (same moment, same actor: one receipt) and the audit event that recorded it."""

    tombstone: Tombstone
    erased_with: tuple[int, ...]
    event: AuditEvent | None


class ActivityService:
    """Reads of the audit log and the job table, each limited to what the caller may read."""

    def __init__(self, store: Store, memories: MemoryService) -> None:
        self.store = store
        self.memories = memories

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
            ids: frozenset[str] | None = frozenset({self.memories.get_memory(actor, memory_id).id})
        elif actor.is_admin and actor.scope is None:
            ids = None
        else:
            page = self.memories.list_memories(actor, page_size=10_000)
            ids = frozenset(m.id for m in page.items)
        query = AuditQuery(
            memory_ids=ids,
            message_id=None if message_id is None else v.message_id(message_id),
            actor=actor_id,
            action=action,
            since=v.optional_timestamp(since, "since"),
            until=v.optional_timestamp(until, "until"),
            limit=limit,
            offset=v.offset(offset),
        )
        with self.store.read() as r:
            events, total = r.audit_events(query)
        return Page(tuple(events), total)

    def extraction_costs(self, actor: Principal, memory_id: object) -> ExtractionCosts:
        """Model calls, tokens and latency of a memory's extraction jobs and of its statements
        that took the model's judgement (finished ``statement`` jobs), and their outcomes."""
        mid = v.memory_id(memory_id)
        with self.store.read() as r:
            authorised(actor, Action.READ, r.memory(mid), mid)
            found = r.jobs(frozenset({mid}))
        return summarise(mid, [j for j in found if j.kind in _METERED])

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
        wanted = None if state is None else v.job_state(state)
        with self.store.read() as r:
            authorised(actor, Action.READ, r.memory(mid), mid)
            found = r.jobs(frozenset({mid}), wanted)
        newest = found[::-1]
        start = (v.page(page) - 1) * page_size
        return Page(tuple(newest[start : start + page_size]), len(found))

    def tombstone(self, actor: Principal, memory_id: object, message_id: object) -> ErasedEntry:
        """The tombstone of an entry erased from a memory the caller may read, with its
        receipt; NotFound when the entry was never erased (or never existed)."""
        mid, eid = v.memory_id(memory_id), v.message_id(message_id)
        query = AuditQuery(memory_ids=frozenset({mid}), message_id=eid, limit=1000)
        with self.store.read() as r:
            authorised(actor, Action.READ, r.memory(mid), mid)
            stones = r.tombstones(mid)
            events, _ = r.audit_events(query)
        found = next((t for t in stones if t.message_id == eid), None)
        if found is None:
            raise NotFound(f"Message {eid} does not exist in memory '{mid}', and none was erased.")
        together = tuple(
            t.message_id for t in stones if (t.erased_at, t.actor) == (found.erased_at, found.actor)
        )
        event = next((e for e in events if e.action in _GONE), None)
        return ErasedEntry(found, together, event)

"""Export and import of a memory as JSONL (the format is :mod:`recallery.wire.transfer`'s): an
import goes through the same writes, checks and audit events as the turns it holds would."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from recallery import validation as v
from recallery.access import Action, authorised
from recallery.clock import Clock
from recallery.errors import InvalidInput
from recallery.models import EntryType, Origin, Principal, Scope
from recallery.requests import BulkAction, ImportReport, TurnInput
from recallery.services import changes
from recallery.services.entries import EntryService
from recallery.services.memories import MemoryService
from recallery.store.base import Store
from recallery.store.filters import EntryFilter
from recallery.wire import transfer


class TransferService:
    """A memory out as records, and records back in as turns."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        memories: MemoryService,
        entries: EntryService,
    ) -> None:
        self.store = store
        self.clock = clock
        self.memories = memories
        self.entries = entries

    def export_memory(self, actor: Principal, memory_id: object) -> list[dict[str, Any]]:
        """A memory as JSONL records (:mod:`recallery.wire.transfer`): its configuration, then
        every current entry, raw and extracted, with its times, type and source id."""
        mid = v.memory_id(memory_id)
        with self.store.read() as r:
            memory = authorised(actor, Action.READ, r.memory(mid), mid)
            entries, _ = r.entries(Scope.of(mid), EntryFilter(), limit=max(memory.entry_count, 1))
        return transfer.export_records(memory, entries, self.clock.now())

    def import_memory(
        self, actor: Principal, memory_id: object | None, records: Iterable[object]
    ) -> ImportReport:
        """Write an export's raw turns into a memory (a new one, from the file's header, when
        ``memory_id`` is None), keeping their conversation times and enable/forget state.
        One transaction: a refused import leaves nothing behind, a new memory included."""
        plan = transfer.plan_import(records)
        if memory_id is None:
            if plan.memory is None:
                raise InvalidInput("records", "a new memory needs the export's header record.")
            memory = self.memories.prepare(actor, **transfer.memory_arguments(plan.memory))
        else:
            memory = self.memories.get_memory(actor, memory_id)
            authorised(actor, Action.WRITE, memory, memory.id)
            plan = self._without_stored(plan, memory.id, memory.entry_count)
        if not plan.turns and memory_id is not None:
            return ImportReport(
                memory.id,
                0,
                skipped_extracted=plan.skipped_extracted,
                already_stored=plan.already_stored,
            )
        turns = [
            TurnInput(t.content, t.user_id, t.agent_id, t.session_id, t.valid_at)
            for t in plan.turns
        ]
        vectors = self.entries.embed_turns([memory], turns) if turns else {}
        now = self.clock.now()
        with self.store.write() as w:
            if memory_id is None:
                memory = self.memories.insert(w, actor, memory)
            else:
                memory = authorised(actor, Action.WRITE, w.lock_memory(memory.id), memory.id)
            written = (
                self.entries.write_turns(
                    w, actor, memory, turns, vectors[memory.model_id], now, Origin.IMPORT
                )
                if turns
                else []
            )
            scope = Scope.of(memory.id)
            pairs = list(zip(plan.turns, written, strict=True))
            for action, wanted in (
                (BulkAction.DISABLE, [i for t, i in pairs if not t.enabled]),
                (BulkAction.FORGET, [i for t, i in pairs if t.forgotten]),
            ):
                if wanted:
                    changes.apply(w, actor, changes.plan(w, scope, action, wanted), now, "")
        return ImportReport(
            memory_id=memory.id,
            imported=len(written),
            id_map={
                t.old_id: i
                for t, i in zip(plan.turns, written, strict=True)
                if t.old_id is not None
            },
            skipped_extracted=plan.skipped_extracted,
            already_stored=plan.already_stored,
            disabled=sum(not t.enabled for t in plan.turns),
            forgotten=sum(t.forgotten for t in plan.turns),
        )

    def _without_stored(
        self, plan: transfer.ImportPlan, memory_id: str, entry_count: int
    ) -> transfer.ImportPlan:
        """``plan`` less the turns the memory already holds (same text, user, agent, session
        and conversation time), so importing a file twice adds nothing the second time."""
        if not plan.turns or entry_count == 0:
            return plan
        raw = EntryFilter(types=frozenset({EntryType.RAW}))
        with self.store.read() as r:
            stored, _ = r.entries(Scope.of(memory_id), raw, limit=max(entry_count, 1))
        held = {
            transfer.turn_key(e.content, e.user_id, e.agent_id, e.session_id, e.valid_at)
            for e in stored
        }
        fresh = tuple(
            t
            for t in plan.turns
            if transfer.turn_key(t.content, t.user_id, t.agent_id, t.session_id, t.valid_at)
            not in held
        )
        return replace(plan, turns=fresh, already_stored=len(plan.turns) - len(fresh))

"""Writing turns and reading entries."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from memstrata import validation as v
from memstrata.access import Action
from memstrata.errors import InvalidInput, NotFound
from memstrata.facade.core import (
    EXTRACTION_JOB,
    EngineCore,
    MessagePage,
    TurnInput,
)
from memstrata.models import (
    Entry,
    EntryType,
    Memory,
    NewEntry,
    Origin,
    Principal,
    Scope,
)
from memstrata.policies.capacity import entry_size
from memstrata.store.filters import EntryFilter


class Entries(EngineCore):
    def add_turn(
        self,
        actor: Principal,
        memory_ids: object,
        *,
        user_input: object,
        agent_response: object,
        user_id: object = "",
        agent_id: object = "",
        session_id: object = "",
        conversation_time: object = None,
    ) -> list[Entry]:
        """Store one conversation turn in each memory (RAGFlow's add-message)."""
        user_text = v.text(user_input, "user_input")
        agent_text = v.text(agent_response, "agent_response")
        if not user_text.strip() and not agent_text.strip():
            raise InvalidInput("user_input", "user_input and agent_response are both empty.")
        turn = TurnInput(
            content=f"User Input: {user_text}\nAgent Response: {agent_text}",
            user_id=v.optional_id_text(user_id, "user_id"),
            agent_id=v.optional_id_text(agent_id, "agent_id"),
            session_id=v.optional_id_text(session_id, "session_id"),
            conversation_time=v.optional_timestamp(conversation_time, "conversation_time"),
        )
        return self.add_messages(actor, memory_ids, [turn])

    def add_messages(
        self, actor: Principal, memory_ids: object, turns: Sequence[TurnInput]
    ) -> list[Entry]:
        """Store raw entries in each memory: one embedding batch per model, one transaction
        per memory holding eviction, the entries, their extraction jobs and audit events."""
        ids = v.memory_ids(memory_ids)
        if not turns:
            raise InvalidInput("messages", "messages cannot be empty.")
        for t in turns:
            v.text(t.content, "content", empty=False)
        memories = self._writable(actor, ids)
        vectors = self._embed_by_model(memories, [t.content for t in turns])
        written: list[Entry] = []
        for memory in memories:
            written.extend(self._write_raw(actor, memory, turns, vectors[memory.embd_id]))
        return written

    def _write_raw(
        self,
        actor: Principal,
        memory: Memory,
        turns: Sequence[TurnInput],
        vectors: NDArray[np.float32],
    ) -> list[Entry]:
        now = self.clock.now()
        dim = vectors.shape[1]
        new = [
            NewEntry(
                memory_id=memory.id,
                tenant_id=memory.tenant_id,
                message_type=EntryType.RAW,
                content=t.content,
                valid_at=t.conversation_time or now,
                size_bytes=entry_size(t.content, dim),
                user_id=t.user_id,
                agent_id=t.agent_id,
                session_id=t.session_id,
                origin=Origin.CONVERSATION,
            )
            for t in turns
        ]
        with self.store.write() as w:
            locked = w.lock_memory(memory.id)
            if locked is None:
                raise NotFound(f"Memory '{memory.id}' not found.")
            self.make_room(w, locked, sum(e.size_bytes for e in new), now)
            ids = w.insert_entries(new, vectors, now)
            for mid in ids:
                w.audit(
                    at=now,
                    actor=actor.user_id,
                    action="entry.add",
                    memory_id=memory.id,
                    message_id=mid,
                )
                if locked.extracted_types:
                    w.enqueue_job(
                        kind=EXTRACTION_JOB,
                        tenant_id=memory.tenant_id,
                        memory_id=memory.id,
                        message_id=mid,
                        at=now,
                    )
            stored = w.get_entries(Scope(frozenset({memory.id})), ids)
        return [stored[i] for i in ids]

    def list_messages(
        self,
        actor: Principal,
        memory_id: object,
        *,
        agent_ids: Sequence[str] | None = None,
        keywords: str | None = None,
        page: int = 1,
        page_size: int = 50,
    ) -> MessagePage:
        """Raw entries newest first (session id substring match on ``keywords``), each with the
        current entries extracted from it and its extraction job."""
        mid = v.memory_id(memory_id)
        with self.store.read() as r:
            memory = self._authorised(r.memory(mid), actor, Action.READ, mid)
            scope = Scope(frozenset({memory.id}))
            raw, total = r.entries(
                scope,
                EntryFilter(
                    types=frozenset({EntryType.RAW}),
                    agent_ids=frozenset(agent_ids) if agent_ids else None,
                    session_contains=keywords or None,
                ),
                order="valid",
                limit=page_size,
                offset=(page - 1) * page_size,
            )
            raw_ids = [e.message_id for e in raw]
            extracted: dict[int, list[Entry]] = {}
            if raw_ids:
                children, _ = r.entries(
                    scope, EntryFilter(source_ids=frozenset(raw_ids)), limit=100 * len(raw_ids)
                )
                for child in sorted(children, key=lambda e: e.message_id):
                    assert child.source_id is not None
                    extracted.setdefault(child.source_id, []).append(child)
            jobs = r.jobs_for_messages(raw_ids)
        return MessagePage(tuple(raw), total, {k: tuple(x) for k, x in extracted.items()}, jobs)

    def recent(
        self,
        actor: Principal,
        memory_ids: object,
        *,
        agent_id: str | None = None,
        session_id: str | None = None,
        limit: int = 10,
    ) -> list[Entry]:
        """Newest entries by valid time; forgotten ones hidden, disabled ones kept (RAGFlow)."""
        scope = self._readable(actor, v.memory_ids(memory_ids))
        f = EntryFilter(
            agent_ids=frozenset({agent_id}) if agent_id else None,
            session_id=session_id or None,
            hide_forgotten=True,
        )
        with self.store.read() as r:
            found, _ = r.entries(scope, f, order="valid", limit=limit)
        return found

    def get_entry(
        self, actor: Principal, memory_id: object, message_id: object
    ) -> tuple[Entry, NDArray[np.float32] | None]:
        mid, eid = v.memory_id(memory_id), v.message_id(message_id)
        with self.store.read() as r:
            memory = self._authorised(r.memory(mid), actor, Action.READ, mid)
            entry = self._entry(r.entry(Scope(frozenset({memory.id})), eid), memory, eid)
            vector = r.vectors([eid]).get(eid)
        return entry, vector

    def history(self, actor: Principal, memory_id: object, message_id: object) -> list[Entry]:
        """Every version of an entry, oldest first (corrections and supersessions)."""
        mid, eid = v.memory_id(memory_id), v.message_id(message_id)
        with self.store.read() as r:
            memory = self._authorised(r.memory(mid), actor, Action.READ, mid)
            scope = Scope(frozenset({memory.id}))
            return self._chain(r, scope, self._entry(r.entry(scope, eid), memory, eid))

    def evidence(self, actor: Principal, memory_id: object, message_id: object) -> list[int]:
        """Raw entries supporting an extracted entry: its source and later duplicates."""
        entry, _ = self.get_entry(actor, memory_id, message_id)
        with self.store.read() as r:
            extra = r.evidence(entry.message_id)
        first = [entry.source_id] if entry.source_id is not None else []
        return first + [s for s in extra if s not in first]

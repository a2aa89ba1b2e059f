"""Entries in and out: writing conversation turns (embedded, budgeted, queued for extraction
in the same transaction) and reading entries, pages, versions and evidence."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import numpy as np
from numpy.typing import NDArray

from recallery import validation as v
from recallery.access import Action, authorised, readable, writable
from recallery.clock import Clock
from recallery.errors import InvalidInput, NotFound
from recallery.models import (
    AuditAction,
    Entry,
    EntryType,
    JobKind,
    Memory,
    NewEntry,
    Origin,
    Principal,
    Scope,
)
from recallery.policies.capacity import entry_size, need_bytes
from recallery.policies.eviction import make_room
from recallery.providers.registry import ModelRegistry
from recallery.requests import (
    MessageFilter,
    MessagePage,
    TurnInput,
    job_entry_ids,
    message_filter_fields,
)
from recallery.store.base import Store
from recallery.store.filters import EntryFilter
from recallery.store.reader import Reader
from recallery.store.writer import Writer
from recallery.text.slots import slots


class EntryService:
    """Raw turns in (embedded, budgeted, queued for extraction); entries and pages out."""

    def __init__(self, store: Store, models: ModelRegistry, clock: Clock) -> None:
        self.store = store
        self.models = models
        self.clock = clock

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
        """Store raw entries in each memory, all or nothing: one embedding batch per model,
        then one transaction holding every memory's eviction, entries, extraction jobs and
        audit events. A write that cannot fit a memory's budget is refused before anything
        is embedded."""
        ids = v.memory_ids(memory_ids)
        if not turns:
            raise InvalidInput("messages", "messages cannot be empty.")
        for t in turns:
            v.text(t.content, "content", empty=False)
        with self.store.read() as r:
            memories = writable(actor, ids, {m.id: m for m in r.memories(ids)})
        vectors = self.embed_turns(memories, turns)
        now = self.clock.now()
        with self.store.write() as w:
            # Locks in one order, so two writers of overlapping memories never deadlock.
            locked = {m.id: w.lock_memory(m.id) for m in sorted(memories, key=lambda m: m.id)}
            written: list[Entry] = []
            for memory in memories:
                current = locked[memory.id]
                if current is None:
                    raise NotFound(f"Memory '{memory.id}' not found.")
                new = self.write_turns(w, actor, current, turns, vectors[memory.model_id], now)
                stored = w.get_entries(Scope.of(current.id), new)
                written.extend(stored[i] for i in new)
        return written

    def embed_turns(
        self, memories: Sequence[Memory], turns: Sequence[TurnInput]
    ) -> dict[str, NDArray[np.float32]]:
        """Vectors of ``turns`` per embedding model of ``memories``, once a write that could
        never fit a memory's whole budget has been refused (sizes are known before any model
        time is spent)."""
        for memory in memories:
            dimension = self.models.embedder(memory.model_id).dimension
            need_bytes([t.content for t in turns], dimension, memory.memory_size)
        return self.models.embed_by_model(
            {m.model_id for m in memories}, [t.content for t in turns]
        )

    def write_turns(
        self,
        w: Writer,
        actor: Principal,
        memory: Memory,
        turns: Sequence[TurnInput],
        vectors: NDArray[np.float32],
        now: datetime,
        origin: Origin = Origin.CONVERSATION,
    ) -> list[int]:
        """Raw entries into a locked ``memory`` inside the caller's transaction (``origin``:
        a conversation, or an import); their new message ids (an import reads none of its
        rows back: at 4,000 turns a memory, that was a fifth of its time in the store)."""
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
                origin=origin,
            )
            for t in turns
        ]
        make_room(w, memory, sum(e.size_bytes for e in new), now)
        ids = w.insert_entries(new, vectors, now, audit=(actor.user_id, AuditAction.ENTRY_ADD))
        w.record_slots(ids, new, [slots(e.content) for e in new])
        if memory.extracted_types:
            w.enqueue_jobs(
                kind=JobKind.EXTRACTION,
                tenant_id=memory.tenant_id,
                memory_id=memory.id,
                message_ids=ids,
                at=now,
            )
        return ids

    def list_messages(
        self,
        actor: Principal,
        memory_id: object,
        where: MessageFilter | None = None,
        *,
        page: int = 1,
        page_size: int = 50,
    ) -> MessagePage:
        """Raw entries newest first, each with the current entries extracted from it, the
        retired ones (replaced or merged: ``replaced``) and its extraction job, filtered by
        ``where`` (its fields are checked here, each error naming the field's wire name)."""
        mid = v.memory_id(memory_id)
        wanted = turns_filter(checked_filter(where))
        with self.store.read() as r:
            memory = authorised(actor, Action.READ, r.memory(mid), mid)
            scope = Scope.of(memory.id)
            raw, total = r.entries(
                scope,
                wanted,
                order="valid",
                limit=page_size,
                offset=(v.page(page) - 1) * page_size,
            )
            raw_ids = [e.message_id for e in raw]
            extracted: dict[int, list[Entry]] = {}
            replaced: dict[int, list[Entry]] = {}
            if raw_ids:
                every = EntryFilter(source_ids=frozenset(raw_ids), current_only=False)
                children, _ = r.entries(scope, every, limit=100 * len(raw_ids))
                for child in sorted(children, key=lambda e: e.message_id):
                    assert child.source_id is not None
                    into = extracted if child.retired_at is None else replaced
                    into.setdefault(child.source_id, []).append(child)
            jobs = r.jobs_for_messages(raw_ids)
            named = {i for j in jobs.values() for ids in job_entry_ids(j).values() for i in ids}
            held = {e.message_id for x in (*extracted.values(), *replaced.values()) for e in x}
            missing = named - held
            stones = r.tombstones(memory.id) if missing else []
            gone = {t.message_id: t for t in stones if t.message_id in missing}
        return MessagePage(
            tuple(raw),
            total,
            {k: tuple(x) for k, x in extracted.items()},
            jobs,
            {k: tuple(x) for k, x in replaced.items()},
            gone,
        )

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
        ids = v.memory_ids(memory_ids)
        with self.store.read() as r:
            scope, _ = readable(actor, ids, {m.id: m for m in r.memories(ids)})
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
            memory = authorised(actor, Action.READ, r.memory(mid), mid)
            entry = existing(r.entry(Scope.of(memory.id), eid), memory.id, eid)
            vector = r.vectors([eid]).get(eid)
        return entry, vector

    def history(self, actor: Principal, memory_id: object, message_id: object) -> list[Entry]:
        """Every version of an entry, oldest first (corrections and supersessions)."""
        mid, eid = v.memory_id(memory_id), v.message_id(message_id)
        with self.store.read() as r:
            memory = authorised(actor, Action.READ, r.memory(mid), mid)
            scope = Scope.of(memory.id)
            return versions(r, scope, existing(r.entry(scope, eid), memory.id, eid))

    def evidence(self, actor: Principal, memory_id: object, message_id: object) -> list[int]:
        """Raw entries supporting an extracted entry: its source and later duplicates."""
        entry, _ = self.get_entry(actor, memory_id, message_id)
        with self.store.read() as r:
            extra = r.evidence(entry.message_id)
        first = [entry.source_id] if entry.source_id is not None else []
        return first + [s for s in extra if s not in first]


def existing(entry: Entry | None, memory_id: str, message_id: int) -> Entry:
    """``entry``, or NotFound naming the message that was asked for."""
    if entry is None:
        raise NotFound(f"Message '{message_id}' in memory '{memory_id}' not found.")
    return entry


def versions(r: Reader, scope: Scope, entry: Entry) -> list[Entry]:
    """All versions linked to ``entry`` by supersession, oldest first."""
    seen = {entry.message_id: entry}
    frontier = [entry]
    while frontier:
        e = frontier.pop()
        links = [i for i in (e.supersedes, e.superseded_by) if i is not None and i not in seen]
        for linked in r.get_entries(scope, links).values():
            seen[linked.message_id] = linked
            frontier.append(linked)
    return sorted(seen.values(), key=lambda e: e.message_id)


def checked_filter(f: MessageFilter | None, field_prefix: str = "") -> MessageFilter:
    """``f`` with every field checked, as an adapter sent it (see ``MessageFilter.sent``);
    an error names the field (``field_prefix`` + its wire name). Empty text and empty lists
    filter nothing."""
    if f is None:
        return MessageFilter()
    out: dict[str, Any] = {}
    for spec in message_filter_fields():
        value = getattr(f, spec.name)
        if value is not None:
            name = field_prefix + spec.metadata["wire"]
            out[spec.name] = _CHECKS[spec.metadata["kind"]](value, name)
    return MessageFilter(**out)


def turns_filter(f: MessageFilter) -> EntryFilter:
    """The raw turns ``f`` selects, as the store filters them."""
    return EntryFilter(
        types=frozenset({EntryType.RAW}),
        agent_ids=f.agent_ids,
        session_contains=f.session_contains,
        session_id=f.session_id,
        user_id=f.user_id,
        extracted_types=f.types,
        enabled_only=f.status is True,
        disabled_only=f.status is False,
        trust=f.trust,
        hide_forgotten=f.forgotten is False,
        forgotten_only=f.forgotten is True,
        origins=f.origin,
        recorded_since=f.recorded_since,
        recorded_before=f.recorded_before,
        valid_since=f.valid_since,
        valid_before=f.valid_before,
    )


def _agents(value: object, field: str) -> frozenset[str] | None:
    listed = [value] if isinstance(value, str) else value
    if not isinstance(listed, (list, tuple, set, frozenset)) or not all(
        isinstance(a, str) for a in listed
    ):
        raise InvalidInput(field, f"{field} must be a list of strings.")
    return frozenset(v.optional_id_text(a, field) for a in listed if a) or None


#: How each kind of declared filter field is checked (value, field name) -> value or None.
_CHECKS: dict[str, Callable[[Any, str], Any]] = {
    "agents": _agents,
    "text": lambda value, field: v.optional_id_text(value, field) or None,
    "types": lambda value, field: v.entry_types(value, field) or None,
    "flag": v.boolean,
    "trust": v.trust_states,
    "origins": v.origins,
    "time": v.optional_timestamp,
}

"""The facade: every operation a user can do, with its permission check, audit event and
transaction. REST, MCP, CLI, UI and jobs call this and nothing lower."""

from __future__ import annotations

import hashlib
import secrets
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from memstrata import transfer
from memstrata import validation as v
from memstrata.access import Action, decide
from memstrata.clock import Clock, SystemClock
from memstrata.errors import Conflict, Forbidden, InvalidInput, NotFound
from memstrata.extraction.costs import ExtractionCosts, summarise
from memstrata.extraction.prompts import default_system_prompt, is_default_prompt
from memstrata.models import (
    ApiKey,
    AuditEvent,
    Entry,
    EntryType,
    EraseReceipt,
    ForgettingPolicy,
    Fusion,
    Hit,
    Job,
    JobState,
    Memory,
    NewEntry,
    Origin,
    Page,
    Permission,
    Principal,
    Scope,
    Tombstone,
    Trust,
    User,
)
from memstrata.policies.capacity import entry_size, plan_eviction
from memstrata.providers.base import ChatModel, Embedder
from memstrata.providers.registry import ModelRegistry
from memstrata.retrieval.candidates import hybrid_candidates, with_neighbours
from memstrata.retrieval.context import Context, assemble
from memstrata.retrieval.fusion import fuse
from memstrata.retrieval.usage import UsageRecorder
from memstrata.settings import Settings
from memstrata.store.base import AuditQuery, MemoryQuery, Store, Writer
from memstrata.store.filters import EntryFilter

EXTRACTION_JOB = "extraction"
#: Candidates drawn from each leg per result asked for, and the least drawn.
POOL_FACTOR, MIN_POOL = 4, 50
#: Eviction looks at this many candidates per round.
EVICTION_BATCH = 512


@dataclass(frozen=True)
class TurnInput:
    """One raw entry to write: a conversation turn's text and where it came from."""

    content: str
    user_id: str = ""
    agent_id: str = ""
    session_id: str = ""
    conversation_time: datetime | None = None


@dataclass(frozen=True)
class MessagePage:
    """A page of raw entries with the entries extracted from each and each turn's job."""

    items: tuple[Entry, ...]
    total: int
    extracted: Mapping[int, tuple[Entry, ...]]
    jobs: Mapping[int, Job]


@dataclass(frozen=True)
class SearchRequest:
    query: str
    memory_ids: tuple[str, ...]
    top_n: int = 5
    similarity_threshold: float = 0.2
    keywords_similarity_weight: float = 0.7
    user_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    types: frozenset[EntryType] | None = None
    valid_on: datetime | None = None
    as_of: datetime | None = None
    fusion: Fusion = Fusion.WEIGHTED
    neighbour_weight: float | None = None
    """How much a raw turn borrows from its conversation neighbours' scores (None: settings)."""
    neighbour_span: int | None = None
    """How many turns on each side count as neighbours (None: settings; 0 turns it off)."""


MEMORY_UPDATABLE = (
    "name",
    "permissions",
    "llm_id",
    "embd_id",
    "memory_type",
    "memory_size",
    "forgetting_policy",
    "temperature",
    "avatar",
    "description",
    "system_prompt",
    "user_prompt",
)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class Engine:
    """memstrata's operations over one store, one model registry and one clock."""

    def __init__(
        self,
        store: Store,
        *,
        models: ModelRegistry | None = None,
        clock: Clock | None = None,
        settings: Settings | None = None,
    ) -> None:
        self.store = store
        self.settings = settings or Settings()
        self.models = models or ModelRegistry(
            self.settings.providers, chat_timeout=self.settings.chat_timeout_s
        )
        self.clock = clock or SystemClock()
        self.usage = UsageRecorder(store)

    @classmethod
    def open(cls, data_dir: str | Path = "data", **kwargs: Any) -> Engine:
        """An engine on the store ``settings`` name (SQLite in ``data_dir`` by default)."""
        from memstrata.store import open_store

        settings: Settings = kwargs.pop("settings", None) or Settings(data_dir=Path(data_dir))
        return cls(open_store(settings), settings=settings, **kwargs)

    def close(self) -> None:
        self.usage.close()
        self.store.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- users, teams, keys ---------------------------------------------------------------

    def create_user(self, name: str, *, admin: bool = False, actor: str = "system") -> User:
        name = v.text(name, "name", limit=v.NAME_LIMIT, empty=False).strip()
        now = self.clock.now()
        user = User(id=uuid.uuid4().hex, name=name, is_admin=admin, created_at=now)
        with self.store.write() as w:
            if w.user_named(name) is not None:
                raise Conflict(f"User '{name}' already exists.")
            w.insert_user(user)
            w.audit(
                at=now, actor=actor, action="user.create", memory_id=None, after={"user": user.id}
            )
        return user

    def principal(self, user_id: str, scope: frozenset[str] | None = None) -> Principal:
        with self.store.read() as r:
            user = r.user(user_id)
            if user is None:
                raise NotFound(f"User '{user_id}' not found.")
            return Principal(user.id, r.teams_of(user.id), user.is_admin, scope, user.name)

    def join_team(self, actor: Principal, tenant_id: str, user_id: str) -> None:
        """Add ``user_id`` to the team of ``tenant_id`` (its owner or an admin may)."""
        if actor.scope is not None or (actor.user_id != tenant_id and not actor.is_admin):
            raise Forbidden("only the team's owner or an admin may add members (unscoped key)")
        now = self.clock.now()
        with self.store.write() as w:
            if w.user(user_id) is None or w.user(tenant_id) is None:
                raise NotFound("User not found.")
            w.add_member(tenant_id, user_id)
            w.audit(
                at=now,
                actor=actor.user_id,
                action="team.join",
                memory_id=None,
                after={"tenant": tenant_id, "user": user_id},
            )

    def create_api_key(
        self, actor: Principal, user_id: str, *, name: str = "", scope: Sequence[str] | None = None
    ) -> tuple[str, str]:
        """A new key for ``user_id``: returns (key id, the key). Only its hash is stored."""
        _require_self_or_admin(actor, user_id, "create keys")
        scoped = None if scope is None else v.memory_ids(list(scope), "scope")
        key = "ms-" + secrets.token_urlsafe(32)
        key_id = uuid.uuid4().hex
        self.register_api_key(actor.user_id, user_id, key, name=name, scope=scoped, key_id=key_id)
        return key_id, key

    def register_api_key(
        self,
        actor: str,
        user_id: str,
        key: str,
        *,
        name: str = "",
        scope: Sequence[str] | None = None,
        key_id: str | None = None,
    ) -> str:
        """Store the hash of a key chosen elsewhere (for example an admin key from settings)."""
        import json

        key_id = key_id or uuid.uuid4().hex
        now = self.clock.now()
        with self.store.write() as w:
            if w.user(user_id) is None:
                raise NotFound(f"User '{user_id}' not found.")
            if w.api_key(hash_key(key)) is None:
                w.insert_api_key(
                    key_id=key_id,
                    user_id=user_id,
                    key_hash=hash_key(key),
                    name=name,
                    scope=None if scope is None else json.dumps(sorted(scope)),
                    at=now,
                )
                w.audit(
                    at=now,
                    actor=actor,
                    action="key.create",
                    memory_id=None,
                    after={"key": key_id, "user": user_id},
                )
        return key_id

    def authenticate(self, key: str) -> Principal:
        import json

        with self.store.read() as r:
            found = r.api_key(hash_key(key))
        if found is None:
            from memstrata.errors import Unauthorized

            raise Unauthorized("Invalid API key.")
        _, user_id, scope = found
        return self.principal(user_id, None if scope is None else frozenset(json.loads(scope)))

    # --- memories -------------------------------------------------------------------------

    def create_memory(
        self,
        actor: Principal,
        *,
        name: object,
        memory_type: object,
        embd_id: object,
        llm_id: object,
        **options: object,
    ) -> Memory:
        v.only_known(options, MEMORY_UPDATABLE, "memory")
        base_name = v.name(name)
        types = v.memory_types(memory_type)
        embd = self._check_embd(embd_id)
        llm = self._check_llm(llm_id)
        now = self.clock.now()
        memory = Memory(
            id=uuid.uuid4().hex,
            tenant_id=actor.user_id,
            name=base_name,
            memory_types=types,
            embd_id=embd,
            llm_id=llm,
            system_prompt=default_system_prompt(types, self.settings.max_items_per_type),
            created_at=now,
            updated_at=now,
        )
        memory = replace(memory, **self._validated_options(options))
        with self.store.write() as w:
            memory = replace(memory, name=self._unique_name(w, actor.user_id, base_name))
            w.insert_memory(memory)
            w.audit(
                at=now,
                actor=actor.user_id,
                action="memory.create",
                memory_id=memory.id,
                after={"name": memory.name, "memory_type": [t.value for t in types]},
            )
        return memory

    def get_memory(self, actor: Principal, memory_id: object) -> Memory:
        with self.store.read() as r:
            mid = v.memory_id(memory_id)
            return self._authorised(r.memory(mid), actor, Action.READ, mid)

    def list_memories(
        self,
        actor: Principal,
        *,
        keywords: str | None = None,
        memory_types: Sequence[str] | None = None,
        storage_type: str | None = None,
        owner_ids: Sequence[str] | None = None,
        ids: Sequence[str] | None = None,
        page: int = 1,
        page_size: int = 30,
    ) -> Page[Memory]:
        flags = None
        if memory_types:
            flags = sum(t.flag for t in v.memory_types(list(memory_types)))
        query = MemoryQuery(
            user_id=actor.user_id,
            tenant_ids=actor.tenant_ids,
            keywords=keywords or None,
            type_flags=flags,
            storage_type=storage_type or None,
            owner_ids=frozenset(owner_ids) if owner_ids else None,
            ids=frozenset(ids) & actor.scope
            if ids and actor.scope
            else (frozenset(ids) if ids else actor.scope),
            limit=page_size,
            offset=(page - 1) * page_size,
        )
        with self.store.read() as r:
            found, total = r.find_memories(query)
        return Page(tuple(found), total)

    def update_memory(
        self, actor: Principal, memory_id: object, changes: Mapping[str, object]
    ) -> Memory:
        v.only_known(changes, MEMORY_UPDATABLE, "memory")
        mid = v.memory_id(memory_id)
        now = self.clock.now()
        with self.store.write() as w:
            memory = self._authorised(w.lock_memory(mid), actor, Action.CONFIGURE, mid)
            wanted = self._memory_changes(w, memory, changes)
            if "permissions" in wanted and not decide(actor, Action.SHARE, memory):
                raise Forbidden("only the owner may change permissions")
            if not wanted:
                return memory
            stored = {
                ("memory_types" if k == "memory_type" else k): val for k, val in wanted.items()
            }
            w.update_memory(mid, {**stored, "updated_at": now})
            w.audit(
                at=now,
                actor=actor.user_id,
                action="memory.update",
                memory_id=mid,
                before={k: _summary(getattr(memory, k)) for k in stored},
                after={k: _summary(val) for k, val in stored.items()},
            )
            updated = w.memory(mid)
        assert updated is not None
        return updated

    def delete_memory(self, actor: Principal, memory_id: object) -> None:
        mid = v.memory_id(memory_id)
        now = self.clock.now()
        with self.store.write() as w:
            memory = self._authorised(w.lock_memory(mid), actor, Action.DELETE, mid)
            removed = w.delete_memory(mid)
            w.audit(
                at=now,
                actor=actor.user_id,
                action="memory.delete",
                memory_id=memory.id,
                after={"entries_removed": len(removed)},
            )
        self.store.scrub()

    # --- writing turns --------------------------------------------------------------------

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
            self._make_room(w, locked, sum(e.size_bytes for e in new), now)
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

    def _make_room(
        self,
        w: Writer,
        memory: Memory,
        incoming: int,
        now: datetime,
        protected: frozenset[int] = frozenset(),
    ) -> None:
        """Evict by the memory's policy until ``incoming`` bytes fit; refuse if they cannot."""
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
        self._delete_with_tombstones(w, memory.id, plan.evict, now, actor, "evicted", "entry.evict")

    def _delete_with_tombstones(
        self,
        w: Writer,
        memory_id: str,
        ids: Sequence[int],
        now: datetime,
        actor: str,
        reason: str,
        action: str,
    ) -> list[int]:
        entries = w.get_entries(Scope(frozenset({memory_id})), ids)
        gone = sorted(entries)
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

    # --- reading entries ------------------------------------------------------------------

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

    # --- lifecycle ------------------------------------------------------------------------

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
            self._make_room(w, locked, size, now, protected=frozenset({eid}))
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

    # --- search ---------------------------------------------------------------------------

    def search(self, actor: Principal, request: SearchRequest) -> list[Hit]:
        """Hybrid search: BM25 and vector candidates filtered in the store, fused, best first."""
        req = self._checked(request)
        scope, memories = self._readable_with(actor, list(req.memory_ids))
        if not scope:
            return []
        if len({id(self.embedder(m)) for m in memories}) > 1:
            raise InvalidInput("memory_id", "memories use different embedding models")
        query_vector = self.embedder(memories[0]).embed([req.query])[0]
        f = EntryFilter.retrieval(
            valid_on=req.valid_on or self.clock.now(),
            as_of=req.as_of,
            types=req.types,
            user_id=req.user_id,
            agent_id=req.agent_id,
            session_id=req.session_id,
        )
        pool = max(POOL_FACTOR * req.top_n, MIN_POOL)
        span, weight = req.neighbour_span or 0, req.neighbour_weight or 0.0
        with self.store.read() as r:
            keyword, vector = hybrid_candidates(r, scope, req.query, query_vector, f, pool)
            neighbours = {}
            if span and weight:
                candidates = {i for i, _ in keyword} | vector.keys()
                neighbours = with_neighbours(r, scope, f, candidates, span, vector, query_vector)
            ranked = fuse(
                keyword,
                vector,
                keyword_weight=req.keywords_similarity_weight,
                method=req.fusion,
                threshold=req.similarity_threshold,
                neighbours=neighbours,
                neighbour_weight=weight,
            )[: req.top_n]
            entries = r.get_entries(scope, [s.message_id for s in ranked])
        hits = [Hit(entries[s.message_id], s.score, s.keyword, s.vector) for s in ranked]
        self.usage.record([h.entry.message_id for h in hits], self.clock.now())
        return hits

    def context(self, actor: Principal, request: SearchRequest, max_tokens: int = 2000) -> Context:
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise InvalidInput("max_tokens", "max_tokens must be a positive integer.")
        return assemble(self.search(actor, request), max_tokens)

    def _checked(self, req: SearchRequest) -> SearchRequest:
        query = v.text(req.query, "query", limit=v.MAX_QUERY_BYTES, empty=False)
        return replace(
            req,
            query=query,
            memory_ids=tuple(v.memory_ids(list(req.memory_ids))),
            top_n=v.top_n(req.top_n),
            similarity_threshold=v.unit_float(req.similarity_threshold, "similarity_threshold"),
            keywords_similarity_weight=v.unit_float(
                req.keywords_similarity_weight, "keywords_similarity_weight"
            ),
            fusion=v.fusion(req.fusion),
            neighbour_weight=v.unit_float(
                self.settings.neighbour_weight
                if req.neighbour_weight is None
                else req.neighbour_weight,
                "neighbour_weight",
            ),
            neighbour_span=v.span(
                self.settings.neighbour_span if req.neighbour_span is None else req.neighbour_span
            ),
        )

    # --- audit and jobs -------------------------------------------------------------------

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

    def chat_model(self, memory: Memory) -> ChatModel | None:
        """The chat model of ``memory.llm_id``; None when its provider is not configured."""
        return self.models.chat_model(memory.llm_id)

    def make_room(
        self,
        w: Writer,
        memory: Memory,
        incoming: int,
        now: datetime,
        protected: frozenset[int] = frozenset(),
    ) -> None:
        """Evict by the memory's policy inside the caller's write transaction so ``incoming``
        bytes fit (extraction writes use it); raises CapacityExceeded when they cannot."""
        self._make_room(w, memory, incoming, now, protected)

    # --- helpers --------------------------------------------------------------------------

    def embedder(self, memory: Memory) -> Embedder:
        return self.models.embedder(memory.embd_id)

    def _embed_by_model(
        self, memories: Sequence[Memory], texts: list[str]
    ) -> dict[str, NDArray[np.float32]]:
        """Vectors of ``texts`` per memory's ``embd_id``; each distinct embedder runs once."""
        by_embedder: dict[int, NDArray[np.float32]] = {}
        out: dict[str, NDArray[np.float32]] = {}
        for memory in memories:
            embedder = self.embedder(memory)
            if id(embedder) not in by_embedder:
                by_embedder[id(embedder)] = embedder.embed(texts)
            out[memory.embd_id] = by_embedder[id(embedder)]
        return out

    def _authorised(
        self, memory: Memory | None, actor: Principal, action: Action, memory_id: str = "?"
    ) -> Memory:
        if memory is None or not decide(actor, Action.READ, memory):
            raise NotFound(f"Memory '{memory.id if memory else memory_id}' not found.")
        decision = decide(actor, action, memory)
        if not decision:
            raise Forbidden(decision.reason)
        return memory

    def _writable(self, actor: Principal, ids: list[str]) -> list[Memory]:
        with self.store.read() as r:
            found = {m.id: m for m in r.memories(ids)}
        missing = [i for i in ids if i not in found or not decide(actor, Action.READ, found[i])]
        if missing:
            raise NotFound(f"Memory {missing} not found.")
        for i in ids:
            self._authorised(found[i], actor, Action.WRITE)
        return [found[i] for i in ids]

    def _readable_with(self, actor: Principal, ids: list[str]) -> tuple[Scope, list[Memory]]:
        """Accessible memories among ``ids`` (the others are dropped, as RAGFlow does)."""
        with self.store.read() as r:
            found = {m.id: m for m in r.memories(ids)}
        allowed = [found[i] for i in ids if i in found and decide(actor, Action.READ, found[i])]
        return Scope(frozenset(m.id for m in allowed)), allowed

    def _readable(self, actor: Principal, ids: list[str]) -> Scope:
        return self._readable_with(actor, ids)[0]

    @staticmethod
    def _entry(entry: Entry | None, memory: Memory, message_id: int) -> Entry:
        if entry is None:
            raise NotFound(f"Message '{message_id}' in memory '{memory.id}' not found.")
        return entry

    @staticmethod
    def _chain(r: Any, scope: Scope, entry: Entry) -> list[Entry]:
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

    def _cascade_update(
        self,
        actor: Principal,
        memory_id: object,
        message_id: object,
        action: Action,
        event: str,
        changes: dict[str, object],
        skip: Any = None,
    ) -> list[int]:
        mid, eid = v.memory_id(memory_id), v.message_id(message_id)
        now = self.clock.now()
        with self.store.write() as w:
            memory = self._authorised(w.lock_memory(mid), actor, action, mid)
            scope = Scope(frozenset({mid}))
            entry = self._entry(w.entry(scope, eid), memory, eid)
            targets = [entry]
            if entry.message_type is EntryType.RAW:
                children, _ = w.entries(
                    scope, EntryFilter(source_ids=frozenset({eid})), limit=100_000
                )
                targets.extend(children)
            changed = []
            for t in targets:
                before = {k: _summary(getattr(t, k)) for k in changes}
                after = {k: _summary(val) for k, val in changes.items()}
                if before == after or (skip is not None and skip(t)):
                    continue
                w.update_entries([t.message_id], changes)
                w.audit(
                    at=now,
                    actor=actor.user_id,
                    action=event,
                    memory_id=mid,
                    message_id=t.message_id,
                    reason="" if t.message_id == eid else f"cascade from message {eid}",
                    before=before,
                    after=after,
                )
                changed.append(t.message_id)
        return changed

    def _check_embd(self, value: object) -> str:
        if not isinstance(value, str) or not value.strip():
            raise InvalidInput("embd_id", "embd_id is required.")
        self.models.check_embedder(value)
        return value.strip()

    def _check_llm(self, value: object) -> str:
        if not isinstance(value, str) or not value.strip():
            raise InvalidInput("llm_id", "llm_id is required.")
        return value.strip()

    def _validated_options(self, options: Mapping[str, object]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        checks: dict[str, Any] = {
            "permissions": v.permission,
            "memory_size": v.memory_size,
            "forgetting_policy": v.forgetting_policy,
            "temperature": v.temperature,
            "avatar": lambda x: v.optional_text(x, "avatar"),
            "description": lambda x: v.optional_text(x, "description"),
            "system_prompt": lambda x: v.optional_text(x, "system_prompt"),
            "user_prompt": lambda x: v.optional_text(x, "user_prompt"),
            "llm_id": self._check_llm,
            "embd_id": self._check_embd,
        }
        for key, value in options.items():
            if key in checks:
                out[key] = checks[key](value)
        return out

    def _memory_changes(
        self, w: Writer, memory: Memory, changes: Mapping[str, object]
    ) -> dict[str, object]:
        """Validated changes that differ from the stored memory (RAGFlow's update rules)."""
        wanted: dict[str, object] = {}
        if "name" in changes:
            new_name = v.name(changes["name"])
            if new_name != memory.name:
                wanted["name"] = self._unique_name(w, memory.tenant_id, new_name)
        if "memory_type" in changes:
            types = v.memory_types(changes["memory_type"])
            if set(types) != set(memory.memory_types):
                wanted["memory_type"] = types
        options = self._validated_options(
            {k: x for k, x in changes.items() if k not in ("name", "memory_type")}
        )
        for key, value in options.items():
            if getattr(memory, key) != value:
                wanted[key] = value
        locked = [k for k in ("embd_id", "memory_type") if k in wanted]
        if locked and memory.entry_count > 0:
            raise InvalidInput(locked[0], f"Can't update {locked} when memory isn't empty.")
        if (
            "memory_type" in wanted
            and "system_prompt" not in changes
            and is_default_prompt(
                memory.system_prompt, memory.memory_types, self.settings.max_items_per_type
            )
        ):
            new_types = wanted["memory_type"]
            assert isinstance(new_types, tuple)
            wanted["system_prompt"] = default_system_prompt(
                new_types, self.settings.max_items_per_type
            )
        return wanted

    @staticmethod
    def _unique_name(w: Writer, tenant_id: str, base: str) -> str:
        name, n = base, 0
        while w.memory_named(tenant_id, name) is not None:
            n += 1
            name = f"{base}({n})"
        if len(name) > v.NAME_LIMIT:
            raise InvalidInput("name", f"Memory name {name} exceeds limit of {v.NAME_LIMIT}.")
        return name

    # === Accounts, jobs, export and import (added for the REST API, SDK and CLI) ==========

    def add_user(self, actor: Principal, name: str, *, admin: bool = False) -> User:
        """Create a user on behalf of an administrator."""
        _require_admin(actor, "create users")
        return self.create_user(name, admin=admin, actor=actor.user_id)

    def list_users(self, actor: Principal) -> list[User]:
        _require_admin(actor, "list users")
        with self.store.read() as r:
            return r.users()

    def user_names(self, user_ids: Iterable[str]) -> dict[str, str]:
        """Display names of users (memory owners), by id; unknown ids are left out."""
        with self.store.read() as r:
            found = [r.user(i) for i in set(user_ids)]
        return {u.id: u.name for u in found if u is not None}

    def list_api_keys(self, actor: Principal, user_id: str) -> list[ApiKey]:
        """Keys of ``user_id`` (never the keys themselves: only their hashes are stored)."""
        _require_self_or_admin(actor, user_id, "list keys")
        with self.store.read() as r:
            if r.user(user_id) is None:
                raise NotFound(f"User '{user_id}' not found.")
            rows = r.api_keys(user_id)
        return [_api_key(user_id, row) for row in rows]

    def revoke_api_key(self, actor: Principal, user_id: str, key_id: str) -> None:
        _require_self_or_admin(actor, user_id, "revoke keys")
        now = self.clock.now()
        with self.store.write() as w:
            if key_id not in {row[0] for row in w.api_keys(user_id)}:
                raise NotFound(f"API key '{key_id}' not found.")
            if w.revoke_api_key(key_id, now):
                w.audit(
                    at=now,
                    actor=actor.user_id,
                    action="key.revoke",
                    memory_id=None,
                    after={"key": key_id, "user": user_id},
                )

    def team_members(self, actor: Principal, tenant_id: str) -> list[str]:
        """Members of the team of ``tenant_id``, for its owner, its members and admins."""
        if tenant_id not in actor.tenant_ids and not actor.is_admin:
            raise NotFound(f"Team '{tenant_id}' not found.")
        with self.store.read() as r:
            if r.user(tenant_id) is None:
                raise NotFound(f"Team '{tenant_id}' not found.")
            return r.members_of(tenant_id)

    def leave_team(self, actor: Principal, tenant_id: str, user_id: str) -> None:
        """Remove ``user_id`` from a team (its owner, an admin, or the member themselves)."""
        if actor.scope is not None or actor.user_id not in (tenant_id, user_id):
            _require_admin(actor, "remove team members")
        now = self.clock.now()
        with self.store.write() as w:
            if user_id not in w.members_of(tenant_id):
                raise NotFound(f"User '{user_id}' is not a member of team '{tenant_id}'.")
            w.remove_member(tenant_id, user_id)
            w.audit(
                at=now,
                actor=actor.user_id,
                action="team.leave",
                memory_id=None,
                after={"tenant": tenant_id, "user": user_id},
            )

    def ensure_admin(
        self, key: str | None = None, *, create_key: bool = True
    ) -> tuple[User, str | None]:
        """The first administrator, created on an empty store. ``key`` (for example from
        ``MEMSTRATA_ADMIN_API_KEY``) is registered as its key; otherwise, when it has no live
        key and ``create_key`` is set, a new key is made. Returns the admin and any new key."""
        admin = self._first_admin() or self._create_first_admin()
        if key:
            self.register_api_key("system", admin.id, key, name="admin")
            return admin, None
        with self.store.read() as r:
            live = [row for row in r.api_keys(admin.id) if row[4] is None]
        if live or not create_key:
            return admin, None
        _, new = self.create_api_key(self.principal(admin.id), admin.id, name="admin")
        return admin, new

    def _first_admin(self) -> User | None:
        with self.store.read() as r:
            admins = sorted((u for u in r.users() if u.is_admin), key=lambda u: u.created_at)
        return admins[0] if admins else None

    def _create_first_admin(self) -> User:
        """Create ``admin``; when another process just did, use that one."""
        try:
            return self.create_user("admin", admin=True)
        except Conflict:
            found = self._first_admin()
            if found is None:
                raise
            return found

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


def _summary(value: object) -> object:
    """A small, content-free rendering of a field value for the audit log."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, (Trust, Permission, ForgettingPolicy, EntryType, Origin)):
        return value.value
    if isinstance(value, tuple):
        return [_summary(x) for x in value]
    if isinstance(value, str) and len(value) > 64:
        return f"<{len(value)} characters>"
    return value


# === Accounts and jobs: helpers of the section above ==========================================


def _api_key(user_id: str, row: tuple[Any, ...]) -> ApiKey:
    import json

    from memstrata.clock import from_epoch

    key_id, name, scope, created, revoked = row
    created_at = from_epoch(created)
    assert created_at is not None
    return ApiKey(
        id=key_id,
        user_id=user_id,
        name=name,
        scope=None if scope is None else tuple(json.loads(scope)),
        created_at=created_at,
        revoked_at=from_epoch(revoked),
    )


def _require_admin(actor: Principal, what: str) -> None:
    if not actor.is_admin or actor.scope is not None:
        raise Forbidden(f"only an administrator (with an unscoped key) may {what}")


def _require_self_or_admin(actor: Principal, user_id: str, what: str) -> None:
    """Users manage their own keys, admins anyone's; a scoped key manages none."""
    if actor.scope is not None or (actor.user_id != user_id and not actor.is_admin):
        raise Forbidden(f"only the user or an administrator (with an unscoped key) may {what}")


def _job_state(value: object) -> JobState:
    try:
        return JobState(str(value))
    except ValueError:
        raise InvalidInput(
            "state", f"state must be one of {[s.value for s in JobState]}, got {value!r}."
        ) from None

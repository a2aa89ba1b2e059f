"""The engine's shared state and helpers: permission checks, embedding, eviction."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from numpy.typing import NDArray

from memstrata import validation as v
from memstrata.access import Action, decide
from memstrata.clock import Clock
from memstrata.errors import Forbidden, InvalidInput, NotFound
from memstrata.models import (
    ApiKey,
    Entry,
    EntryType,
    ForgettingPolicy,
    Fusion,
    Job,
    JobState,
    Memory,
    Origin,
    Permission,
    Principal,
    Scope,
    Tombstone,
    Trust,
)
from memstrata.policies.capacity import plan_eviction
from memstrata.providers.base import ChatModel, Embedder
from memstrata.providers.registry import ModelRegistry
from memstrata.retrieval.usage import UsageRecorder
from memstrata.settings import Settings
from memstrata.store.base import Store, Writer
from memstrata.store.filters import EntryFilter

EXTRACTION_JOB = "extraction"


POOL_FACTOR, MIN_POOL = 4, 50


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


class EngineCore:
    """State every part of the facade shares, and the helpers they use."""

    store: Store
    settings: Settings
    models: ModelRegistry
    clock: Clock
    usage: UsageRecorder

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

    def make_room(
        self,
        w: Writer,
        memory: Memory,
        incoming: int,
        now: datetime,
        protected: frozenset[int] = frozenset(),
    ) -> None:
        """Evict by the memory's policy inside the caller's write transaction so ``incoming``
        bytes fit; raises CapacityExceeded when they cannot."""
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

    def chat_model(self, memory: Memory) -> ChatModel | None:
        """The chat model of ``memory.llm_id``; None when its provider is not configured."""
        return self.models.chat_model(memory.llm_id)

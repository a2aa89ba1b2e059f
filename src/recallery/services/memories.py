"""Memories: create, configure, list and delete (RAGFlow's rules: unique names per owner,
embedding model and types locked once a memory holds entries)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from recallery import validation as v
from recallery.access import Action, authorised, decide, require_manage
from recallery.audit import summary
from recallery.clock import Clock
from recallery.errors import Forbidden, InvalidInput
from recallery.extraction.prompts import default_system_prompt, is_default_prompt
from recallery.models import AuditAction, Entry, ForgettingPolicy, Memory, Page, Principal, Scope
from recallery.policies.eviction import make_room
from recallery.providers.registry import ModelRegistry
from recallery.requests import MEMORY_UPDATABLE
from recallery.settings import Settings
from recallery.store.base import Store
from recallery.store.filters import EntryFilter
from recallery.store.queries import MemoryQuery
from recallery.store.reader import Reader
from recallery.store.writer import Writer

#: How many of a memory's newest entries its warnings read for text its embedder cannot.
RECENT_CHECKED = 20


class MemoryService:
    """Memories: create, read, list, configure and delete, with RAGFlow's rules."""

    def __init__(
        self, store: Store, models: ModelRegistry, clock: Clock, settings: Settings
    ) -> None:
        self.store = store
        self.models = models
        self.clock = clock
        self.settings = settings

    def create_memory(
        self,
        /,
        actor: Principal,
        *,
        name: object,
        memory_type: object,
        embd_id: object,
        llm_id: object,
        **options: object,
    ) -> Memory:
        memory = self.prepare(
            actor, name=name, memory_type=memory_type, embd_id=embd_id, llm_id=llm_id, **options
        )
        with self.store.write() as w:
            return self.insert(w, actor, memory)

    def prepare(
        self,
        /,
        actor: Principal,
        *,
        name: object,
        memory_type: object,
        embd_id: object,
        llm_id: object,
        **options: object,
    ) -> Memory:
        """A new memory of ``actor``'s, validated but not yet stored (see :meth:`insert`)."""
        if actor.scope is not None:
            raise Forbidden("a key scoped to memories cannot create memories")
        require_manage(actor, "create memories")
        v.only_known(options, MEMORY_UPDATABLE, "memory")
        types = v.memory_types(memory_type)
        now = self.clock.now()
        embd = self._check_embd(embd_id)
        memory = Memory(
            id=uuid.uuid4().hex,
            tenant_id=actor.user_id,
            name=v.name(name),
            memory_types=types,
            embd_id=embd,
            local_model=self.models.local_for(embd),
            llm_id=_check_llm(llm_id),
            system_prompt=default_system_prompt(types, self.settings.max_items_per_type),
            created_at=now,
            updated_at=now,
        )
        return replace(memory, **self._validated_options(options))

    def insert(self, w: Writer, actor: Principal, memory: Memory) -> Memory:
        """Store a prepared memory inside the caller's transaction, its name made unique
        among its owner's, with its audit event."""
        memory = replace(memory, name=self._unique_name(w, memory.tenant_id, memory.name))
        w.insert_memory(memory)
        w.audit(
            at=self.clock.now(),
            actor=actor.user_id,
            action=AuditAction.MEMORY_CREATE,
            memory_id=memory.id,
            after={"name": memory.name, "memory_type": [t.value for t in memory.memory_types]},
        )
        return memory

    def memory_warnings(self, memory: Memory) -> list[str]:
        """What keeps ``memory`` from working as configured, for the answers that create,
        configure or show it: a chat model whose provider has no endpoint here, and recent
        text in a script its embedder cannot read."""
        found = [self.models.chat_warning(memory.llm_id)]
        if self.models.english_only(memory.model_id):
            found.append(
                self.models.unread_warning(memory.embd_id, self._recent(memory), memory.model_id)
            )
        return [w for w in found if w]

    def written_warnings(self, written: Sequence[Entry]) -> list[str]:
        """What the answer to a write says beside its entries: text written in a script
        the memory's embedder cannot read (once per memory)."""
        texts: dict[str, list[str]] = {}
        for entry in written:
            texts.setdefault(entry.memory_id, []).append(entry.content)
        with self.store.read() as r:
            memories = r.memories(sorted(texts))
        found = (self.models.unread_warning(m.embd_id, texts[m.id], m.model_id) for m in memories)
        return [w for w in found if w]

    def _recent(self, memory: Memory) -> list[str]:
        with self.store.read() as r:
            entries, _ = r.entries(Scope.of(memory.id), EntryFilter(), limit=RECENT_CHECKED)
        return [e.content for e in entries]

    def get_memory(self, actor: Principal, memory_id: object) -> Memory:
        with self.store.read() as r:
            mid = v.memory_id(memory_id)
            return authorised(actor, Action.READ, r.memory(mid), mid)

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
            ids=_narrowed(frozenset(ids) if ids else None, actor.scope),
            limit=page_size,
            offset=(v.page(page) - 1) * page_size,
        )
        with self.store.read() as r:
            found, total = r.find_memories(query)
        return Page(tuple(found), total)

    def update_memory(
        self,
        actor: Principal,
        memory_id: object,
        changes: Mapping[str, object],
        *,
        evict: object = False,
    ) -> Memory:
        """Change a memory's settings. The budget and forgetting policy are the owner's; a
        budget below the bytes already held is refused unless ``evict`` asks for the
        eviction, which then happens at once, by the memory's policy, audited."""
        v.only_known(changes, MEMORY_UPDATABLE, "memory")
        mid = v.memory_id(memory_id)
        evicting = v.boolean(evict, "evict")
        now = self.clock.now()
        with self.store.write() as w:
            memory = authorised(actor, Action.CONFIGURE, w.lock_memory(mid), mid)
            wanted = self._memory_changes(w, memory, changes)
            if "permissions" in wanted and not decide(actor, Action.SHARE, memory):
                raise Forbidden("only the owner may change permissions")
            budget = {"memory_size", "forgetting_policy"} & wanted.keys()
            if budget and not (decision := decide(actor, Action.RESIZE, memory)):
                raise Forbidden(decision.reason)
            size = wanted.get("memory_size", memory.memory_size)
            assert isinstance(size, int)
            if size < memory.used_bytes and not evicting:
                raise InvalidInput(
                    "memory_size",
                    f"memory_size {size} is below the {memory.used_bytes} bytes the memory "
                    "holds; free space first, or ask for the eviction (evict=true).",
                )
            if not wanted:
                return memory
            stored = {
                ("memory_types" if k == "memory_type" else k): val for k, val in wanted.items()
            }
            w.update_memory(mid, {**stored, "updated_at": now})
            w.audit(
                at=now,
                actor=actor.user_id,
                action=AuditAction.MEMORY_UPDATE,
                memory_id=mid,
                before={k: summary(getattr(memory, k)) for k in stored},
                after={k: summary(val) for k, val in stored.items()},
            )
            if evicting:
                policy = wanted.get("forgetting_policy", memory.forgetting_policy)
                assert isinstance(policy, ForgettingPolicy)
                resized = replace(memory, memory_size=size, forgetting_policy=policy)
                make_room(w, resized, 0, now)
            updated = w.memory(mid)
        assert updated is not None
        return updated

    def delete_memory(self, actor: Principal, memory_id: object) -> None:
        mid = v.memory_id(memory_id)
        now = self.clock.now()
        with self.store.write() as w:
            memory = authorised(actor, Action.DELETE, w.lock_memory(mid), mid)
            removed = w.delete_memory(mid)
            w.audit(
                at=now,
                actor=actor.user_id,
                action=AuditAction.MEMORY_DELETE,
                memory_id=memory.id,
                after={"entries_removed": len(removed)},
            )
        self.store.scrub()

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
        if "embd_id" in wanted:  # an empty memory takes the new id's local model too
            embd = wanted["embd_id"]
            assert isinstance(embd, str)
            wanted["local_model"] = self.models.local_for(embd)
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

    def _check_embd(self, value: object) -> str:
        if not isinstance(value, str) or not value.strip():
            raise InvalidInput("embd_id", "embd_id is required.")
        self.models.check_new_embedder(v.text(value, "embd_id", limit=v.MAX_ID_TEXT))
        return value.strip()

    def _validated_options(self, options: Mapping[str, object]) -> dict[str, Any]:
        checks: dict[str, Callable[[object], object]] = {
            "permissions": v.permission,
            "memory_size": v.memory_size,
            "forgetting_policy": v.forgetting_policy,
            "temperature": v.temperature,
            "avatar": lambda x: v.optional_text(x, "avatar"),
            "description": lambda x: v.optional_text(x, "description"),
            "system_prompt": lambda x: v.optional_text(x, "system_prompt"),
            "user_prompt": lambda x: v.optional_text(x, "user_prompt"),
            "llm_id": _check_llm,
            "embd_id": self._check_embd,
        }
        return {key: checks[key](value) for key, value in options.items() if key in checks}

    @staticmethod
    def _unique_name(w: Writer, tenant_id: str, base: str) -> str:
        name, n = base, 0
        while w.memory_named(tenant_id, name) is not None:
            n += 1
            name = f"{base}({n})"
        if len(name) > v.NAME_LIMIT:
            raise InvalidInput("name", f"Memory name {name} exceeds limit of {v.NAME_LIMIT}.")
        return name


def _check_llm(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput("llm_id", "llm_id is required.")
    return v.text(value, "llm_id", limit=v.MAX_ID_TEXT).strip()


def _narrowed(ids: frozenset[str] | None, scope: frozenset[str] | None) -> frozenset[str] | None:
    """The memory ids a listing may show: those asked for, never beyond the key's scope (an
    empty scope shows nothing); None: no limit."""
    if scope is None:
        return ids
    return scope if ids is None else ids & scope


#: Most memories one request about people looks at (a data-subject request, the People
#: listing, a repair).
MAX_VISIBLE = 10_000


def visible_memories(r: Reader, actor: Principal, field: str) -> list[Memory]:
    """Every memory ``actor`` can see (its key's scope, its own and its teams'); more than
    :data:`MAX_VISIBLE` is refused, naming the request's ``field``."""
    ids = None if actor.scope is None else frozenset(actor.scope)
    query = MemoryQuery(
        user_id=actor.user_id, tenant_ids=actor.tenant_ids, ids=ids, limit=MAX_VISIBLE
    )
    found, total = r.find_memories(query)
    if total > MAX_VISIBLE:
        raise InvalidInput(field, f"the key reaches more than {MAX_VISIBLE} memories.")
    return found

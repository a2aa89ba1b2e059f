"""A memory both ways: its full configuration, and the summary the list route shows."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from recallery.models import EntryType, ForgettingPolicy, Memory, Permission
from recallery.wire.envelope import Json
from recallery.wire.times import millis, parse_time, stamp


def embd_name(embd_id: str) -> str:
    """Display name of an embedding model id (the part before ``@Provider``)."""
    return embd_id.rpartition("@")[0] or embd_id


def _identity(m: Memory, owner_name: str | None) -> Json:
    """What a memory's full and summary shapes both begin with."""
    return {
        "id": m.id,
        "name": m.name,
        "avatar": m.avatar,
        "tenant_id": m.tenant_id,
        "owner_name": owner_name,
        "memory_type": [t.value for t in m.memory_types],
        "storage_type": m.storage_type,
        "embd_id": m.embd_id,
        "llm_id": m.llm_id,
    }


def memory_dict(m: Memory, owner_name: str | None = None) -> Json:
    """A memory's full configuration (create, update, config routes)."""
    return {
        **_identity(m, owner_name),
        "permissions": m.permissions.value,
        "description": m.description,
        "memory_size": m.memory_size,
        "forgetting_policy": m.forgetting_policy.value,
        "temperature": m.temperature,
        "system_prompt": m.system_prompt,
        "user_prompt": m.user_prompt,
        "create_time": millis(m.created_at),
        "create_date": stamp(m.created_at),
        "update_time": millis(m.updated_at),
        "update_date": stamp(m.updated_at),
        "used_bytes": m.used_bytes,
        "entry_count": m.entry_count,
        # the local model an @Builtin embd_id resolved to when the memory was created
        "local_model": m.local_model,
    }


def memory_from_dict(d: Mapping[str, Any]) -> Memory:
    return Memory(
        id=d["id"],
        tenant_id=d["tenant_id"],
        name=d["name"],
        memory_types=tuple(EntryType(t) for t in d["memory_type"]),
        embd_id=d["embd_id"],
        llm_id=d["llm_id"],
        permissions=Permission(d["permissions"]),
        memory_size=int(d["memory_size"]),
        forgetting_policy=ForgettingPolicy(d["forgetting_policy"]),
        temperature=float(d["temperature"]),
        system_prompt=d.get("system_prompt"),
        user_prompt=d.get("user_prompt"),
        avatar=d.get("avatar"),
        description=d.get("description"),
        storage_type=d.get("storage_type", "table"),
        created_at=parse_time(d.get("create_time")),
        updated_at=parse_time(d.get("update_time")),
        used_bytes=int(d.get("used_bytes", 0)),
        entry_count=int(d.get("entry_count", 0)),
        local_model=d.get("local_model"),
    )


@dataclass(frozen=True)
class MemorySummary:
    """A memory as the list route shows it (RAGFlow's list items carry no sizes or prompts)."""

    id: str
    name: str
    tenant_id: str
    owner_name: str | None
    memory_types: tuple[EntryType, ...]
    storage_type: str
    embd_id: str
    embd_name: str
    llm_id: str
    permissions: Permission
    avatar: str | None
    description: str | None
    created_at: datetime | None


def memory_item_dict(m: Memory, owner_name: str | None) -> Json:
    return {
        **_identity(m, owner_name),
        "embd_name": embd_name(m.embd_id),
        "permissions": m.permissions.value,
        "description": m.description,
        "create_time": millis(m.created_at),
        "create_date": stamp(m.created_at),
    }


def memory_item_from_dict(d: Mapping[str, Any]) -> MemorySummary:
    return MemorySummary(
        id=d["id"],
        name=d["name"],
        tenant_id=d["tenant_id"],
        owner_name=d.get("owner_name"),
        memory_types=tuple(EntryType(t) for t in d["memory_type"]),
        storage_type=d["storage_type"],
        embd_id=d["embd_id"],
        embd_name=d["embd_name"],
        llm_id=d["llm_id"],
        permissions=Permission(d["permissions"]),
        avatar=d.get("avatar"),
        description=d.get("description"),
        created_at=parse_time(d.get("create_time")),
    )

"""Users, API keys, the caller and audit events."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recallery.models import ALL_CAPABILITIES, ApiKey, AuditEvent, Capability, Principal, User
from recallery.wire.envelope import Json
from recallery.wire.times import iso, parse_time, required_time


def user_dict(u: User) -> Json:
    return {"id": u.id, "name": u.name, "is_admin": u.is_admin, "created_at": iso(u.created_at)}


def user_from_dict(d: Mapping[str, Any]) -> User:
    return User(
        id=d["id"],
        name=d["name"],
        is_admin=bool(d["is_admin"]),
        created_at=required_time(d["created_at"]),
    )


def key_dict(k: ApiKey) -> Json:
    return {
        "id": k.id,
        "user_id": k.user_id,
        "name": k.name,
        "scope": None if k.scope is None else list(k.scope),
        "created_at": iso(k.created_at),
        "revoked_at": iso(k.revoked_at),
        "capabilities": None if k.capabilities is None else list(k.capabilities),
    }


def key_from_dict(d: Mapping[str, Any]) -> ApiKey:
    scope = d.get("scope")
    return ApiKey(
        id=d["id"],
        user_id=d["user_id"],
        name=d.get("name", ""),
        scope=None if scope is None else tuple(scope),
        created_at=required_time(d["created_at"]),
        revoked_at=parse_time(d.get("revoked_at")),
        capabilities=None if d.get("capabilities") is None else tuple(d["capabilities"]),
    )


def principal_dict(p: Principal) -> Json:
    """The caller (``/users/me``): user, teams, key scope and what the key may do."""
    return {
        "id": p.user_id,
        "name": p.name,
        "is_admin": p.is_admin,
        "tenant_ids": sorted(p.tenant_ids),
        "scope": None if p.scope is None else sorted(p.scope),
        "capabilities": sorted(c.value for c in p.capabilities),
        "key_id": p.key_id,
    }


def principal_from_dict(d: Mapping[str, Any]) -> Principal:
    scope, capabilities = d.get("scope"), d.get("capabilities")
    return Principal(
        user_id=d["id"],
        tenant_ids=frozenset(d["tenant_ids"]),
        is_admin=bool(d["is_admin"]),
        scope=None if scope is None else frozenset(scope),
        name=d.get("name", ""),
        capabilities=ALL_CAPABILITIES
        if capabilities is None
        else frozenset(Capability(c) for c in capabilities),
        key_id=d.get("key_id", ""),
    )


def audit_dict(a: AuditEvent) -> Json:
    return {
        "id": a.id,
        "at": iso(a.at),
        "actor": a.actor,
        "action": a.action,
        "memory_id": a.memory_id,
        "message_id": a.message_id,
        "reason": a.reason,
        "before": a.before,
        "after": a.after,
    }


def audit_from_dict(d: Mapping[str, Any]) -> AuditEvent:
    return AuditEvent(
        id=int(d["id"]),
        at=required_time(d["at"]),
        actor=d["actor"],
        action=d["action"],
        memory_id=d.get("memory_id"),
        message_id=d.get("message_id"),
        reason=d.get("reason", ""),
        before=dict(d.get("before") or {}),
        after=dict(d.get("after") or {}),
    )

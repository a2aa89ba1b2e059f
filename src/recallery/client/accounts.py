"""The SDK's account operations: the audit log, health, the caller, users, keys and teams."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from recallery import wire
from recallery.client.call import Call, carried, none
from recallery.models import ApiKey, AuditEvent, Page, Principal, User
from recallery.requests import AuditFilter, audit_filter_fields
from recallery.requests.either import audit_filter


def audit_log(
    where: AuditFilter | None = None,
    *,
    memory_id: str | None = None,
    message_id: int | None = None,
    actor_id: str | None = None,
    action: str | None = None,
    since: datetime | str | None = None,
    until: datetime | str | None = None,
    page: int = 1,
    page_size: int = 30,
) -> Call[Page[AuditEvent]]:
    """Audit events newest first, of memories the caller can read. Each filter is a field of
    :class:`recallery.requests.AuditFilter` (by its SDK keyword), which says what it selects;
    None filters nothing. An ``AuditFilter`` as ``where`` says it all (then give no filter
    keyword)."""
    given = locals()
    args = {spec.metadata["arg"]: given[spec.metadata["arg"]] for spec in audit_filter_fields()}
    chosen = audit_filter(where, args)
    params: dict[str, object] = {"page": page, "page_size": page_size}
    for spec in audit_filter_fields():
        params[spec.metadata["wire"]] = carried(getattr(chosen, spec.name))
    return Call("GET", "/audit", wire.audit_page_from_dict, params=params)


def health() -> Call[dict[str, Any]]:
    return Call("GET", "/health", dict)


def me() -> Call[Principal]:
    return Call("GET", "/users/me", wire.principal_from_dict)


def create_user(name: str, *, admin: bool = False) -> Call[User]:
    return Call("POST", "/users", wire.user_from_dict, json={"name": name, "is_admin": admin})


def list_users() -> Call[list[User]]:
    return Call("GET", "/users", wire.users_from_dict)


def create_api_key(
    user_id: str,
    *,
    name: str = "",
    scope: Sequence[str] | None = None,
    capabilities: Sequence[str] | None = None,
) -> Call[tuple[ApiKey, str]]:
    """A new key for ``user_id``: its record and the key itself (shown only this once);
    ``capabilities``: any of ``read``, ``write``, ``manage`` (default: all)."""
    body = {
        "name": name,
        "scope": None if scope is None else list(scope),
        "capabilities": None if capabilities is None else list(capabilities),
    }
    return Call("POST", f"/users/{user_id}/keys", wire.new_key_from_dict, json=body)


def list_api_keys(user_id: str) -> Call[list[ApiKey]]:
    return Call("GET", f"/users/{user_id}/keys", wire.keys_from_dict)


def revoke_api_key(user_id: str, key_id: str) -> Call[None]:
    return Call("DELETE", f"/users/{user_id}/keys/{key_id}", none)


def join_team(tenant_id: str, user_id: str) -> Call[None]:
    return Call("POST", f"/teams/{tenant_id}/members", none, json={"user_id": user_id})


def team_members(tenant_id: str) -> Call[list[str]]:
    return Call("GET", f"/teams/{tenant_id}/members", wire.members_from_dict)


def leave_team(tenant_id: str, user_id: str) -> Call[None]:
    return Call("DELETE", f"/teams/{tenant_id}/members/{user_id}", none)

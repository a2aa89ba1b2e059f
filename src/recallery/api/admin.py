"""Accounts and the audit log: users, API keys, teams, and who did what."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends

import recallery
from recallery import validation as v
from recallery import wire
from recallery.api.deps import Actor, EngineDep
from recallery.errors import InvalidInput
from recallery.web.edge import declared, params
from recallery.web.edge.bodies import REQUIRED_BODY, NewKey, NewMember, NewUser

router = APIRouter(tags=["accounts and audit"])


@router.get("/health", summary="Liveness (no key needed)", tags=["system"])
def health() -> Any:
    return wire.envelope({"status": "ok", "version": recallery.__version__})


@router.get("/users/me", summary="The caller: user, teams and key scope")
def me(actor: Actor) -> Any:
    return wire.envelope(wire.principal_dict(actor))


@router.get("/users", summary="All users (admin)")
def list_users(engine: EngineDep, actor: Actor) -> Any:
    return wire.envelope(wire.users_dict(engine.list_users(actor)))


@router.post("/users", summary="Create a user (admin)", openapi_extra=REQUIRED_BODY)
def create_user(engine: EngineDep, actor: Actor, body: NewUser | None = None) -> Any:
    fields = body or NewUser()
    fields.require("name")
    admin = v.boolean(False if fields.is_admin is None else fields.is_admin, "is_admin")
    user = engine.add_user(actor, fields.name, admin=admin)
    return wire.envelope(wire.user_dict(user))


@router.get("/users/{user_id}/keys", summary="A user's API keys (the user or an admin)")
def list_keys(engine: EngineDep, actor: Actor, user_id: str) -> Any:
    return wire.envelope(wire.keys_dict(engine.list_api_keys(actor, user_id)))


@router.post("/users/{user_id}/keys", summary="A new API key, shown once (the user or an admin)")
def create_key(engine: EngineDep, actor: Actor, user_id: str, body: NewKey | None = None) -> Any:
    fields = body or NewKey()
    name = v.optional_id_text(fields.name, "name")
    key_id, key = engine.create_api_key(
        actor,
        user_id,
        name=name,
        scope=_scope(fields.scope),
        # Any of read, write, manage (absent or null: all).
        capabilities=fields.sent().get("capabilities"),
    )
    found = next(k for k in engine.list_api_keys(actor, user_id) if k.id == key_id)
    return wire.envelope(wire.new_key_dict(found, key))


@router.delete("/users/{user_id}/keys/{key_id}", summary="Revoke an API key")
def revoke_key(engine: EngineDep, actor: Actor, user_id: str, key_id: str) -> Any:
    engine.revoke_api_key(actor, user_id, key_id)
    return wire.envelope()


@router.get("/teams/{tenant_id}/members", summary="Members of a user's team")
def list_members(engine: EngineDep, actor: Actor, tenant_id: str) -> Any:
    return wire.envelope(wire.members_dict(tenant_id, engine.team_members(actor, tenant_id)))


@router.post(
    "/teams/{tenant_id}/members",
    summary="Add a member (the team's owner or an admin)",
    openapi_extra=REQUIRED_BODY,
)
def add_member(
    engine: EngineDep, actor: Actor, tenant_id: str, body: NewMember | None = None
) -> Any:
    fields = body or NewMember()
    fields.require("user_id")
    engine.join_team(actor, tenant_id, v.text(fields.user_id, "user_id", limit=v.MAX_ID_TEXT))
    return wire.envelope()


@router.delete("/teams/{tenant_id}/members/{user_id}", summary="Remove a member")
def remove_member(engine: EngineDep, actor: Actor, tenant_id: str, user_id: str) -> Any:
    engine.leave_team(actor, tenant_id, user_id)
    return wire.envelope()


@router.get("/audit", summary="The audit log, newest first")
def audit(
    engine: EngineDep,
    actor: Actor,
    filters: Annotated[dict[str, Any], Depends(declared.audit_parameters)],
    page: params.Page = None,
    page_size: params.Size = None,
) -> Any:
    number, size = v.page(params.page(page)), params.size(page_size, params.FALLBACK_SIZE)
    f = declared.audit_filter(filters)
    found = engine.audit_log(
        actor,
        memory_id=None if not f.memory_id else params.path_memory_id(str(f.memory_id)),
        message_id=f.message_id,
        actor_id=f.actor_id,
        action=f.action,
        since=f.since,
        until=f.until,
        limit=size,
        offset=(number - 1) * size,
    )
    return wire.envelope(wire.audit_page_dict(found))


def _scope(value: object) -> list[str] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise InvalidInput("scope", "scope must be a list of memory ids.")
    return v.memory_ids(value, "scope")

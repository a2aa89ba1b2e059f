"""Users, teams and API keys: who exists, who belongs to whose team, and which key speaks
for whom (keys are stored as hashes only and shown once, when created)."""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import uuid
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from recallery import validation as v
from recallery.access import require_admin, require_manage, require_self_or_admin, visible
from recallery.clock import Clock, from_epoch
from recallery.errors import (
    Conflict,
    Forbidden,
    InvalidInput,
    KeyRevoked,
    NotFound,
    RecalleryWarning,
    Unauthorized,
)
from recallery.models import ALL_CAPABILITIES, ApiKey, AuditAction, Capability, Principal, User
from recallery.store.base import Store

log = logging.getLogger("recallery.accounts")
#: The shortest administrator key from the environment taken without a loud warning.
MIN_ADMIN_KEY = 32


@dataclass(frozen=True, slots=True)
class ScopedMemory:
    """A memory a key's scope names: its name where the viewer sees it (else None), and
    whether it was deleted since."""

    id: str
    name: str | None
    deleted: bool = False


class AccountService:
    """Users, teams and API keys (only keys' hashes are stored)."""

    def __init__(self, store: Store, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    def create_user(self, name: str, *, admin: bool = False, actor: str = "system") -> User:
        name = v.text(name, "name", limit=v.NAME_LIMIT, empty=False).strip()
        now = self.clock.now()
        user = User(id=uuid.uuid4().hex, name=name, is_admin=admin, created_at=now)
        with self.store.write() as w:
            if w.user_named(name) is not None:
                raise Conflict(f"User '{name}' already exists.")
            w.insert_user(user)
            w.audit(
                at=now,
                actor=actor,
                action=AuditAction.USER_CREATE,
                memory_id=None,
                after={"user": user.id},
            )
        return user

    def principal(
        self,
        user_id: str,
        scope: frozenset[str] | None = None,
        capabilities: frozenset[Capability] = ALL_CAPABILITIES,
    ) -> Principal:
        with self.store.read() as r:
            user = r.user(user_id)
            if user is None:
                raise NotFound(f"User '{user_id}' not found.")
            teams = r.teams_of(user.id)
        return Principal(user.id, teams, user.is_admin, scope, user.name, capabilities)

    def join_team(self, actor: Principal, tenant_id: str, user_id: str) -> None:
        """Add ``user_id`` to the team of ``tenant_id`` (its owner or an admin may)."""
        if actor.scope is not None or (actor.user_id != tenant_id and not actor.is_admin):
            raise Forbidden("only the team's owner or an admin may add members (unscoped key)")
        require_manage(actor, "add team members")
        now = self.clock.now()
        with self.store.write() as w:
            if w.user(user_id) is None or w.user(tenant_id) is None:
                raise NotFound("User not found.")
            w.add_member(tenant_id, user_id)
            w.audit(
                at=now,
                actor=actor.user_id,
                action=AuditAction.TEAM_JOIN,
                memory_id=None,
                after={"tenant": tenant_id, "user": user_id},
            )

    def create_api_key(
        self,
        actor: Principal,
        user_id: str,
        *,
        name: str = "",
        scope: Sequence[str] | None = None,
        capabilities: object = None,
    ) -> tuple[str, str]:
        """A new key for ``user_id``: returns (key id, the key). Only its hash is stored.
        ``capabilities`` (``read``, ``write``, ``manage``; None: all) limits what it may do,
        never beyond what the caller's own key may."""
        require_self_or_admin(actor, user_id, "create keys")
        scoped = None if scope is None else v.memory_ids(list(scope), "scope")
        allowed = capability_set(capabilities)
        beyond = (ALL_CAPABILITIES if allowed is None else allowed) - actor.capabilities
        if beyond:
            names = ", ".join(sorted(c.value for c in beyond))
            raise Forbidden(f"a key cannot grant capabilities its creator lacks ({names})")
        key = "rc-" + secrets.token_urlsafe(32)
        key_id = uuid.uuid4().hex
        self.register_api_key(
            actor.user_id,
            user_id,
            key,
            name=name,
            scope=scoped,
            key_id=key_id,
            capabilities=allowed,
        )
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
        capabilities: frozenset[Capability] | None = None,
    ) -> str:
        """Store the hash of a key chosen elsewhere (for example an admin key from settings)."""
        key_id = key_id or uuid.uuid4().hex
        now = self.clock.now()
        with self.store.write() as w:
            if w.user(user_id) is None:
                raise NotFound(f"User '{user_id}' not found.")
            if w.key_revoked(hash_key(key)):
                raise KeyRevoked(f"The API key '{name or key_id}' was revoked; it stays revoked.")
            if w.api_key(hash_key(key)) is None:
                w.insert_api_key(
                    key_id=key_id,
                    user_id=user_id,
                    key_hash=hash_key(key),
                    name=name,
                    scope=None if scope is None else json.dumps(sorted(scope)),
                    capabilities=None
                    if capabilities is None
                    else json.dumps(sorted(c.value for c in capabilities)),
                    at=now,
                )
                w.audit(
                    at=now,
                    actor=actor,
                    action=AuditAction.KEY_CREATE,
                    memory_id=None,
                    after={
                        "key": key_id,
                        "user": user_id,
                        **({} if capabilities is None else {"capabilities": sorted(capabilities)}),
                    },
                )
        return key_id

    def authenticate(self, key: str) -> Principal:
        with self.store.read() as r:
            found = r.api_key(hash_key(key))
        if found is None:
            raise Unauthorized("Invalid API key.")
        key_id, user_id, scope, capabilities = found
        principal = self.principal(
            user_id,
            None if scope is None else frozenset(json.loads(scope)),
            ALL_CAPABILITIES
            if capabilities is None
            else frozenset(Capability(c) for c in json.loads(capabilities)),
        )
        return replace(principal, key_id=str(key_id))

    def ensure_user(self, name: str) -> User:
        """The user called ``name``, created on first use (for scripts that run twice)."""
        try:
            return self.create_user(name)
        except Conflict:
            with self.store.read() as r:
                found = r.user_named(name.strip())
            assert found is not None  # users are never deleted
            return found

    def add_user(self, actor: Principal, name: str, *, admin: bool = False) -> User:
        """Create a user on behalf of an administrator."""
        require_admin(actor, "create users")
        return self.create_user(name, admin=admin, actor=actor.user_id)

    def list_users(self, actor: Principal) -> list[User]:
        require_admin(actor, "list users")
        with self.store.read() as r:
            return r.users()

    def user_names(self, user_ids: Iterable[str]) -> dict[str, str]:
        """Display names of users (memory owners), by id; unknown ids are left out."""
        with self.store.read() as r:
            found = [r.user(i) for i in set(user_ids)]
        return {u.id: u.name for u in found if u is not None}

    def list_api_keys(self, actor: Principal, user_id: str) -> list[ApiKey]:
        """Keys of ``user_id`` (never the keys themselves: only their hashes are stored)."""
        require_self_or_admin(actor, user_id, "list keys")
        with self.store.read() as r:
            if r.user(user_id) is None:
                raise NotFound(f"User '{user_id}' not found.")
            rows = r.api_keys(user_id)
        return [_api_key(user_id, row) for row in rows]

    def key_scopes(self, actor: Principal, user_id: str) -> dict[str, ScopedMemory]:
        """The memories the scopes of ``user_id``'s keys name, by id: each named where
        ``actor`` sees it, and whether it was deleted (a key whose every scoped memory was
        deleted authenticates still, and reaches nothing)."""
        ids = {m for k in self.list_api_keys(actor, user_id) for m in (k.scope or ())}
        with self.store.read() as r:
            found = {mid: r.memory(mid) for mid in sorted(ids)}
        return {
            mid: ScopedMemory(
                mid,
                None if m is None or not visible(actor, m) else m.name,
                deleted=m is None,
            )
            for mid, m in found.items()
        }

    def revoke_api_key(self, actor: Principal, user_id: str, key_id: str) -> None:
        require_self_or_admin(actor, user_id, "revoke keys")
        now = self.clock.now()
        with self.store.write() as w:
            if key_id not in {row[0] for row in w.api_keys(user_id)}:
                raise NotFound(f"API key '{key_id}' not found.")
            if w.revoke_api_key(key_id, now):
                w.audit(
                    at=now,
                    actor=actor.user_id,
                    action=AuditAction.KEY_REVOKE,
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
            require_admin(actor, "remove team members")
        require_manage(actor, "remove team members")
        now = self.clock.now()
        with self.store.write() as w:
            if user_id not in w.members_of(tenant_id):
                raise NotFound(f"User '{user_id}' is not a member of team '{tenant_id}'.")
            w.remove_member(tenant_id, user_id)
            w.audit(
                at=now,
                actor=actor.user_id,
                action=AuditAction.TEAM_LEAVE,
                memory_id=None,
                after={"tenant": tenant_id, "user": user_id},
            )

    def ensure_admin(
        self, key: str | None = None, *, create_key: bool = True
    ) -> tuple[User, str | None]:
        """The first administrator, created on an empty store. ``key`` (for example from
        ``RECALLERY_ADMIN_API_KEY``) is registered as its key; otherwise, when it has no live
        key and ``create_key`` is set, a new key is made. Returns the admin and any new key."""
        admin = self._first_admin() or self._create_first_admin()
        if key:
            if len(key) < MIN_ADMIN_KEY:
                short = (
                    f"RECALLERY_ADMIN_API_KEY is only {len(key)} characters: anyone who guesses "
                    f"it administers every memory. Use at least {MIN_ADMIN_KEY} random "
                    "characters (`python -c 'import secrets; print(secrets.token_urlsafe(32))'`)."
                )
                log.warning(short)
                warnings.warn(short, RecalleryWarning, stacklevel=2)
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


def capability_set(value: object, field: str = "capabilities") -> frozenset[Capability] | None:
    """Capabilities as sent (a list of names, or one comma-separated text); None: all."""
    if value is None:
        return None
    names = value.split(",") if isinstance(value, str) else value
    if not isinstance(names, (list, tuple, set, frozenset)):
        raise InvalidInput(field, f"{field} must be a list of: read, write, manage.")
    known = {c.value for c in Capability}
    wanted = [str(n).strip() for n in names]
    unknown = [n for n in wanted if n not in known]
    if unknown or not wanted:
        what = f"unknown capability {unknown[0]!r}" if unknown else "no capability given"
        raise InvalidInput(field, f"{field}: {what}; choose from read, write, manage.")
    return frozenset(Capability(n) for n in wanted)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _api_key(user_id: str, row: tuple[Any, ...]) -> ApiKey:
    key_id, name, scope, created, revoked, capabilities = row
    created_at = from_epoch(created)
    assert created_at is not None
    return ApiKey(
        id=key_id,
        user_id=user_id,
        name=name,
        scope=None if scope is None else tuple(json.loads(scope)),
        created_at=created_at,
        revoked_at=from_epoch(revoked),
        capabilities=None if capabilities is None else tuple(json.loads(capabilities)),
    )

"""Logging in and out, the account page (keys, the team), and the users page and each user's
keys for admins."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from fastapi import APIRouter, Request
from starlette.responses import Response

from recallery.errors import Conflict, Forbidden, InvalidInput, NotFound, Throttled, Unauthorized
from recallery.models import ApiKey
from recallery.services.accounts import ScopedMemory
from recallery.web.edge.guard import authenticate
from recallery.web.frame import (
    Form,
    FormExpired,
    Posted,
    Viewer,
    WebDep,
    WebRoute,
    Who,
    back,
    local,
    page,
    web,
)
from recallery.web.session import LOGIN_COOKIE, LOGIN_S, SESSION_COOKIE

router = APIRouter(route_class=WebRoute, include_in_schema=False)


@router.get("/login")
def login_form(request: Request, next: str = "/") -> Response:
    parts = web(request)
    if parts.sessions.find(request.cookies.get(SESSION_COOKIE)) is not None:
        return back(local(next))
    return _login_page(request, local(next), "", 200)


def _login_page(request: Request, next: str, error: str, status: int) -> Response:
    cookie, token = web(request).sessions.login_token()
    response = page(request, None, "login.html", status, token=token, next=next, error=error)
    response.set_cookie(
        LOGIN_COOKIE, cookie, max_age=LOGIN_S, path="/login", httponly=True, samesite="strict"
    )
    return response


@router.post("/login")
async def login(request: Request) -> Response:
    """Open a session for a valid API key (the form's own token must match its cookie).
    Without the login cookie nothing is read. The key is looked up first: a valid one is never
    refused for its address's failed logins; a wrong one from an address that has failed too
    often gets a 429 page that says when to retry
    (:func:`~recallery.web.edge.guard.authenticate`)."""
    parts = web(request)
    if LOGIN_COOKIE not in request.cookies:
        raise FormExpired
    form = Form(await request.form(max_files=0, max_fields=8))
    if not parts.sessions.login_token_matches(request.cookies.get(LOGIN_COOKIE), form.text("csrf")):
        raise FormExpired
    next, key = local(form.text("next", "/")), form.text("key")
    try:
        await authenticate(request.scope, parts.engine, key)
    except Throttled as exc:
        return _throttled(request, exc)
    except Unauthorized:
        return _login_page(request, next, "That API key is not valid, or it was revoked.", 401)
    cookie, _ = parts.sessions.open(key)
    response = back(next)
    secure = request.url.scheme == "https"
    response.set_cookie(SESSION_COOKIE, cookie, httponly=True, samesite="strict", secure=secure)
    response.delete_cookie(LOGIN_COOKIE, path="/login")
    return response


def _throttled(request: Request, exc: Throttled) -> Response:
    response = page(
        request, None, "error.html", 429, title="Too many failed logins", text=exc.message
    )
    response.headers["Retry-After"] = str(exc.retry_after)
    return response


@router.post("/logout")
def logout(request: Request, parts: WebDep, who: Who, form: Posted) -> Response:
    parts.sessions.close(request.cookies.get(SESSION_COOKIE))
    response = back("/login")
    response.delete_cookie(SESSION_COOKIE)
    return response


# --- the account page -----------------------------------------------------------------------


@router.get("/account")
def account(request: Request, parts: WebDep, who: Who) -> Response:
    return _account_page(request, parts, who)


def _account_page(
    request: Request,
    parts: WebDep,
    who: Viewer,
    new_key: str = "",
    error: str = "",
    status: int = 200,
) -> Response:
    engine, me = parts.engine, who.principal
    try:
        keys, refused = engine.list_api_keys(me, me.user_id), ""
        scopes = scoped(keys, engine.key_scopes(me, me.user_id))
    except Forbidden as exc:
        keys, refused, scopes = [], str(exc), {}
    members = engine.team_members(me, me.user_id)
    teams = sorted(me.tenant_ids - {me.user_id})
    owned = engine.list_memories(me, owner_ids=[me.user_id], page_size=100).items
    return page(
        request,
        who,
        "account.html",
        status,
        keys=keys,
        scopes=scopes,
        keys_refused=refused,
        members=members,
        teams=teams,
        names=engine.user_names([*members, *teams]),
        owned=owned,
        new_key=new_key,
        error=error,
    )


def scoped(
    keys: Iterable[ApiKey], memories: Mapping[str, ScopedMemory]
) -> dict[str, tuple[list[ScopedMemory], int]]:
    """Each scoped key's memories that still exist, and how many of its memories were
    deleted (all of them: the key reaches nothing)."""
    found: dict[str, tuple[list[ScopedMemory], int]] = {}
    for key in keys:
        if key.scope is None:
            continue
        named = [memories.get(m, ScopedMemory(m, None)) for m in key.scope]
        found[key.id] = ([m for m in named if not m.deleted], sum(m.deleted for m in named))
    return found


@router.post("/account/keys")
def create_key(request: Request, parts: WebDep, who: Who, form: Posted) -> Response:
    me = who.principal
    try:
        _, key = parts.engine.create_api_key(
            me,
            me.user_id,
            name=form.text("name"),
            scope=form.texts("scope") or None,
            capabilities=capabilities(form),
        )
    except (InvalidInput, Forbidden) as exc:
        return _account_page(request, parts, who, error=str(exc), status=400)
    return _account_page(request, parts, who, new_key=key)


def capabilities(form: Form) -> list[str] | None:
    """The capabilities ticked for a new key (none ticked is refused, naming the field); a
    form without the checkboxes asks for every capability its creator holds."""
    return form.texts("capability") if form.flag("capabilities_chosen") else None


@router.post("/account/keys/{key_id}/revoke")
def revoke_key(parts: WebDep, who: Who, form: Posted, key_id: str) -> Response:
    parts.engine.revoke_api_key(who.principal, who.principal.user_id, key_id)
    who.flash(f"Key {key_id} revoked.")
    return back("/account")


@router.post("/account/team")
def add_member(request: Request, parts: WebDep, who: Who, form: Posted) -> Response:
    me = who.principal
    try:
        parts.engine.join_team(me, me.user_id, form.text("user_id"))
    except (NotFound, Forbidden) as exc:
        return _account_page(request, parts, who, error=str(exc), status=400)
    who.flash("Member added.")
    return back("/account")


@router.post("/account/team/{user_id}/remove")
def remove_member(parts: WebDep, who: Who, form: Posted, user_id: str) -> Response:
    parts.engine.leave_team(who.principal, who.principal.user_id, user_id)
    who.flash("Member removed.")
    return back("/account")


@router.post("/account/teams/{tenant_id}/leave")
def leave_team(parts: WebDep, who: Who, form: Posted, tenant_id: str) -> Response:
    parts.engine.leave_team(who.principal, tenant_id, who.principal.user_id)
    who.flash("You left the team.")
    return back("/account")


# --- users (administrators) -----------------------------------------------------------------


@router.get("/users")
def users(request: Request, parts: WebDep, who: Who) -> Response:
    return _users_page(request, parts, who)


def _users_page(
    request: Request,
    parts: WebDep,
    who: Viewer,
    new_key: tuple[str, str] | None = None,
    error: str = "",
    status: int = 200,
) -> Response:
    found = parts.engine.list_users(who.principal)
    return page(request, who, "users.html", status, users=found, new_key=new_key, error=error)


@router.post("/users")
def create_user(request: Request, parts: WebDep, who: Who, form: Posted) -> Response:
    try:
        made = parts.engine.add_user(who.principal, form.text("name"), admin=form.flag("admin"))
    except (InvalidInput, Conflict) as exc:
        return _users_page(request, parts, who, error=str(exc), status=400)
    who.flash(f"User {made.name} created.")
    return back("/users")


@router.post("/users/{user_id}/keys")
def create_user_key(
    request: Request, parts: WebDep, who: Who, form: Posted, user_id: str
) -> Response:
    try:
        _, key = parts.engine.create_api_key(
            who.principal, user_id, name=form.text("name"), capabilities=capabilities(form)
        )
    except (InvalidInput, Forbidden) as exc:
        return _users_page(request, parts, who, error=str(exc), status=400)
    names = parts.engine.user_names([user_id])
    return _users_page(request, parts, who, new_key=(names.get(user_id, user_id), key))


@router.get("/users/{user_id}/keys")
def user_keys(request: Request, parts: WebDep, who: Who, user_id: str) -> Response:
    """One user's keys (an administrator's view of what the account page shows its owner;
    the request log links each key here)."""
    engine = parts.engine
    keys = engine.list_api_keys(who.principal, user_id)  # refused unless self or admin
    scopes = scoped(keys, engine.key_scopes(who.principal, user_id))
    name = engine.user_names([user_id]).get(user_id, user_id)
    return page(
        request, who, "user_keys.html", keys=keys, scopes=scopes, user_id=user_id, user_name=name
    )


@router.post("/users/{user_id}/keys/{key_id}/revoke")
def revoke_user_key(parts: WebDep, who: Who, form: Posted, user_id: str, key_id: str) -> Response:
    parts.engine.revoke_api_key(who.principal, user_id, key_id)
    who.flash(f"Key {key_id} revoked.")
    return back(f"/users/{user_id}/keys")

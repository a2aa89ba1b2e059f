"""The search playground (every knob of a search at the defaults an agent's search has, the
scores of each hit with why, its contributions by ranking stage, and beside them the context
block exactly as an agent receives it, from one search that counts as no retrieval) and the
audit log, each addressed by REST's names for its fields (the old ``q`` and ``memory`` are
still read)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from recallery.engine import Engine
from recallery.errors import InvalidInput
from recallery.models import (
    AuditAction,
    Capability,
    Memory,
    Principal,
)
from recallery.requests import DEFAULT_MAX_TOKENS, search_knobs
from recallery.web.edge import declared
from recallery.web.edge.declared import wire_default
from recallery.web.edge.params import id_list
from recallery.web.frame import WebDep, WebRoute, Who, number, page

router = APIRouter(route_class=WebRoute, include_in_schema=False)

Text = Annotated[str | None, Query()]
Many = Annotated[list[str] | None, Query()]
AUDIT_PAGE = 50
#: The playground's old names for its query and memories (REST's ``query`` and
#: ``memory_id``), still read one release for addresses already shared.
OLD_SEARCH_NAMES = ("q", "memory")


def _choices(kind: str) -> list[str] | None:
    """The names a knob of this kind takes, as its REST schema lists them (none: free)."""
    names = declared.SEARCH_KINDS[kind].query.get("enum")
    return [n for n in names if n] if names else None


def knobs(sent: Mapping[str, list[str]]) -> list[dict[str, Any]]:
    """Every declared search knob as the form shows it (by its wire name, its kind, what it
    does, the value sent or its default, and its choices), so the playground offers each
    knob an agent's search has, a new one included."""
    out = []
    for spec in search_knobs():
        wire, kind = spec.metadata["wire"], spec.metadata["kind"]
        # the playground explains every hit unless told not to
        default = "true" if kind == "flag" else wire_default(spec)
        values = [v for v in sent.get(wire, []) if v.strip()]
        shown = values or ([] if default is None else [str(default)])
        # a knob without a default of its own takes the server's setting
        hint = "server setting" if default is None and kind in ("unit", "span") else ""
        out.append(
            {
                "wire": wire,
                "kind": kind,
                "about": str(spec.metadata["about"]),
                "values": shown,
                "choices": _choices(kind),
                "hint": hint,
            }
        )
    return out


@router.get("/search")
def search(
    request: Request,
    parts: WebDep,
    who: Who,
    query: Text = None,
    memory_id: Many = None,
    max_tokens: Text = None,
    q: Text = None,
    memory: Many = None,
) -> Response:
    """The playground, its query and memories named as REST's search names them (``query``,
    ``memory_id``: repeated or comma-separated); the old ``q`` and ``memory`` are still read,
    one release."""
    engine, me = parts.engine, who.principal
    visible = engine.list_memories(me, page_size=100).items
    asked = memory_id or memory
    chosen = id_list(asked, "memory_id") if asked else ([visible[0].id] if visible else [])
    text = query or q
    sent = {k: request.query_params.getlist(k) for k in request.query_params}
    form = {
        "query": text or "",
        "memory_id": chosen,
        "max_tokens": max_tokens or str(DEFAULT_MAX_TOKENS),
        "knobs_sent": bool(set(sent) - {"query", "memory_id", *OLD_SEARCH_NAMES}),
    }
    hits, context, error = None, None, ""
    if text:
        given: dict[str, Any] = {"query": text, "memory_id": chosen, "explain": "true"}
        for spec in search_knobs():
            wire = spec.metadata["wire"]
            values = [v for v in sent.get(wire, []) if v.strip()]
            if values:
                listed = declared.SEARCH_KINDS[spec.metadata["kind"]].listed
                given[wire] = values if listed else values[0]
        budget: Any = number(max_tokens, int, DEFAULT_MAX_TOKENS)
        try:  # one search, ranked as an agent's, counted as no retrieval
            hits, context = engine.try_out(me, declared.search_request(given), budget)
        except InvalidInput as exc:
            error = str(exc)
    return page(
        request,
        who,
        "search.html",
        400 if error else 200,
        visible=visible,
        form=form,
        knobs=knobs(sent),
        hits=hits,
        context=context,
        error=error,
        tab="search",
        memory=next((m for m in visible if [m.id] == chosen), None),
    )


@router.get("/audit")
def audit(
    request: Request,
    parts: WebDep,
    who: Who,
    memory_id: Text = None,
    actor: Text = None,
    action: Text = None,
    since: Text = None,
    until: Text = None,
    number: Annotated[int, Query(alias="page", ge=1, le=10**6)] = 1,
    memory: Text = None,
) -> Response:
    """The audit log, filtered as REST's :class:`~recallery.requests.AuditFilter` names its
    fields (``memory_id``, ``actor``, ``action``, ``since``, ``until``); the old ``memory``
    is still read, one release."""
    engine, me = parts.engine, who.principal
    visible = engine.list_memories(me, page_size=100).items
    form = {
        "memory_id": memory_id or memory or "",
        "actor": actor or "",
        "action": action or "",
        "since": since or "",
        "until": until or "",
    }
    found = engine.audit_log(
        me,
        memory_id=form["memory_id"] or None,
        actor_id=actor or None,
        action=action or None,
        since=since or None,
        until=until or None,
        limit=AUDIT_PAGE,
        offset=(number - 1) * AUDIT_PAGE,
    )
    shown = {m.id: m.name for m in visible}
    people = _actors(engine, me, visible, actor or "")
    query = urlencode({k: v for k, v in form.items() if v})
    return page(
        request,
        who,
        "audit.html",
        events=found.items,
        total=found.total,
        number=number,
        pages=max(1, -(-found.total // AUDIT_PAGE)),
        visible=visible,
        memory_names=shown,
        names=engine.user_names({e.actor for e in found.items}),
        actors=people,
        form=form,
        query=query,
        actions=[a.value for a in AuditAction],
        tab="audit",
        memory=next((m for m in visible if m.id == form["memory_id"]), None),
    )


def _actors(
    engine: Engine, me: Principal, visible: Sequence[Memory], chosen: str
) -> list[tuple[str, str]]:
    """The people the audit log may be filtered by, as (id, name), by name: the viewer, their
    team, the owners of the memories they see (an administrator: every user), and whoever
    is chosen now."""
    if me.is_admin and me.scope is None and Capability.MANAGE in me.capabilities:
        return sorted(((u.id, u.name) for u in engine.list_users(me)), key=lambda p: p[1])
    ids = {me.user_id, *me.tenant_ids, *engine.team_members(me, me.user_id)}
    ids |= {m.tenant_id for m in visible} | ({chosen} if chosen else set())
    names = engine.user_names(ids)
    return sorted(((i, names.get(i, i)) for i in ids), key=lambda p: p[1])

"""The search playground (every knob of a search at the defaults an agent's search has, the
scores of each hit, and beside them the context block exactly as an agent receives it, from
one search that counts as no retrieval) and the audit log."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from recallery.engine import Engine
from recallery.errors import InvalidInput
from recallery.models import AuditAction, Capability, EntryType, Fusion, Memory, Principal, Trust
from recallery.requests import (
    DEFAULT_FUSION,
    DEFAULT_KEYWORD_WEIGHT,
    DEFAULT_MAX_TOKENS,
    DEFAULT_SIMILARITY_THRESHOLD,
    DEFAULT_TOP_N,
    SearchRequest,
)
from recallery.web.frame import WebDep, WebRoute, Who, number, page

router = APIRouter(route_class=WebRoute, include_in_schema=False)

Text = Annotated[str | None, Query()]
Many = Annotated[list[str] | None, Query()]
AUDIT_PAGE = 50


@router.get("/search")
def search(
    request: Request,
    parts: WebDep,
    who: Who,
    q: Text = None,
    memory: Many = None,
    top_n: Text = None,
    threshold: Text = None,
    weight: Text = None,
    fusion: Text = None,
    type: Many = None,
    trust: Many = None,
    user: Text = None,
    agent: Text = None,
    session: Text = None,
    as_of: Text = None,
    valid_on: Text = None,
    max_tokens: Text = None,
) -> Response:
    engine, me = parts.engine, who.principal
    visible = engine.list_memories(me, page_size=100).items
    chosen = memory or ([visible[0].id] if visible else [])
    form = {
        "q": q or "",
        "memory": chosen,
        "top_n": top_n or str(DEFAULT_TOP_N),
        "threshold": threshold or str(DEFAULT_SIMILARITY_THRESHOLD),
        "weight": weight or str(DEFAULT_KEYWORD_WEIGHT),
        "fusion": fusion or DEFAULT_FUSION.value,
        "type": type or [],
        "trust": trust or [],
        "user": user or "",
        "agent": agent or "",
        "session": session or "",
        "as_of": as_of or "",
        "valid_on": valid_on or "",
        "max_tokens": max_tokens or str(DEFAULT_MAX_TOKENS),
    }
    hits, context, error = None, None, ""
    if q:
        options: dict[str, Any] = {
            "top_n": number(top_n, int, DEFAULT_TOP_N),
            "similarity_threshold": number(threshold, float, DEFAULT_SIMILARITY_THRESHOLD),
            "keywords_similarity_weight": number(weight, float, DEFAULT_KEYWORD_WEIGHT),
            "fusion": fusion or DEFAULT_FUSION.value,
            "types": type or None,
            "trust": trust or None,
            "user_id": user or None,
            "agent_id": agent or None,
            "session_id": session or None,
            "as_of": as_of or None,
            "valid_on": valid_on or None,
        }
        request_ = SearchRequest(q, tuple(chosen), **options)
        budget: Any = number(max_tokens, int, DEFAULT_MAX_TOKENS)
        try:  # one search, ranked as an agent's, counted as no retrieval
            hits, context = engine.try_out(me, request_, budget)
        except InvalidInput as exc:
            error = str(exc)
    return page(
        request,
        who,
        "search.html",
        400 if error else 200,
        visible=visible,
        form=form,
        hits=hits,
        context=context,
        error=error,
        types=[t.value for t in EntryType],
        trusts=[t.value for t in Trust if t is not Trust.REJECTED],
        fusions=[f.value for f in Fusion],
        tab="search",
        memory=next((m for m in visible if [m.id] == chosen), None),
    )


@router.get("/audit")
def audit(
    request: Request,
    parts: WebDep,
    who: Who,
    memory: Text = None,
    actor: Text = None,
    action: Text = None,
    since: Text = None,
    until: Text = None,
    number: Annotated[int, Query(alias="page", ge=1, le=10**6)] = 1,
) -> Response:
    engine, me = parts.engine, who.principal
    visible = engine.list_memories(me, page_size=100).items
    form = {
        "memory": memory or "",
        "actor": actor or "",
        "action": action or "",
        "since": since or "",
        "until": until or "",
    }
    found = engine.audit_log(
        me,
        memory_id=memory or None,
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
        memory=next((m for m in visible if m.id == memory), None),
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

"""A memory's Facts page: the current extracted entries as one flat table, newest first by
valid time, paged on the server and filtered by type, trust, status, user and text; each row
with its source turn, use count and actions (confirm, reject, disable or enable, forget or
restore, correct inline). Every action is the engine's single operation; without scripts each
is a plain form that comes back to this page, with htmx only the row is swapped."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from recallery.engine import Engine
from recallery.errors import InvalidInput
from recallery.models import Principal
from recallery.requests import FactPage
from recallery.web.frame import WebDep, WebRoute, Who, page

router = APIRouter(route_class=WebRoute, include_in_schema=False)

#: The page's filter fields (query parameters).
FILTERS = ("type", "trust", "status", "user", "text")
#: What the status filter offers: enabled or disabled, forgotten or not.
STATUSES = {
    "enabled": {"status": True},
    "disabled": {"status": False},
    "forgotten": {"forgotten": True},
    "kept": {"forgotten": False},
}
SIZES = (25, 50, 100)


def chosen(values: Mapping[str, Any]) -> dict[str, str]:
    """The filter fields that were given a value."""
    return {k: str(values[k]).strip() for k in FILTERS if values.get(k) and str(values[k]).strip()}


def facts(
    engine: Engine, me: Principal, memory_id: str, wanted: Mapping[str, str], number: int, size: int
) -> FactPage:
    """The page of facts ``wanted`` selects (the engine checks each field, naming it)."""
    status = wanted.get("status")
    if status is not None and status not in STATUSES:
        raise InvalidInput("status", f"status must be one of {', '.join(STATUSES)}.")
    return engine.facts(
        me,
        memory_id,
        types=wanted.get("type"),
        trust=wanted.get("trust"),
        user_id=wanted.get("user"),
        text=wanted.get("text"),
        page=number,
        page_size=size,
        **STATUSES.get(status or "", {}),
    )


@router.get("/memories/{memory_id}/facts")
def facts_page(
    request: Request,
    parts: WebDep,
    who: Who,
    memory_id: str,
    number: Annotated[int, Query(alias="page", ge=1, le=10**6)] = 1,
    size: Annotated[int, Query(ge=1, le=100)] = 50,
) -> Response:
    engine, me = parts.engine, who.principal
    memory = engine.get_memory(me, memory_id)
    wanted = chosen(request.query_params)
    size = size if size in SIZES else 50
    try:
        found, error = facts(engine, me, memory.id, wanted, number, size), ""
    except InvalidInput as exc:
        found, error = facts(engine, me, memory.id, {}, 1, size), str(exc)
    return page(
        request,
        who,
        "facts.html",
        400 if error else 200,
        memory=memory,
        tab="facts",
        found=found,
        wanted=wanted,
        error=error,
        number=number,
        size=size,
        sizes=SIZES,
        statuses=list(STATUSES),
        pages=max(1, -(-found.total // size)),
        query=urlencode({**wanted, "size": str(size)}),
        here=request.url.path + (f"?{request.url.query}" if request.url.query else ""),
    )

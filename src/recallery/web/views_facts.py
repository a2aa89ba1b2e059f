"""A memory's Facts page: the current extracted entries as one flat table, newest first by
valid time, paged on the server and filtered by type, trust, status, user and text; each row
with its source turn, use count and actions (confirm, reject, disable or enable, forget or
restore, correct inline). Every action is the engine's single operation; without scripts each
is a plain form that comes back to this page, with htmx only the row is swapped."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from recallery.engine import Engine
from recallery.errors import InvalidInput
from recallery.models import Principal
from recallery.requests import FactPage
from recallery.web.frame import WebDep, WebRoute, Who
from recallery.web.listing import listed, listing

router = APIRouter(route_class=WebRoute, include_in_schema=False)

#: The page's filter fields (query parameters).
FILTERS = ("message_type", "trust", "status", "user_id", "text")
#: What the status filter offers: enabled or disabled, forgotten or not.
STATUSES = {
    "enabled": {"status": True},
    "disabled": {"status": False},
    "forgotten": {"forgotten": True},
    "kept": {"forgotten": False},
}


def facts(
    engine: Engine, me: Principal, memory_id: str, wanted: Mapping[str, str], number: int, size: int
) -> FactPage:
    """The page of facts ``wanted`` selects (the engine checks each field, naming it)."""
    status = wanted.get("status")
    if status is not None and status not in STATUSES:
        raise InvalidInput("status", f"status must be one of {', '.join(STATUSES)}.")
    chosen = STATUSES.get(status or "", {})
    return engine.facts(
        me,
        memory_id,
        types=wanted.get("message_type"),
        trust=wanted.get("trust"),
        user_id=wanted.get("user_id"),
        text=wanted.get("text"),
        page=number,
        page_size=size,
        status=chosen.get("status"),
        forgotten=chosen.get("forgotten"),
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
    shown = listing(request, parts, who, memory_id, FILTERS, number, size)

    def select(wanted: Mapping[str, str], number: int, size: int) -> FactPage:
        return facts(engine, me, shown.memory.id, wanted, number, size)

    return listed(request, who, "facts.html", shown, select, tab="facts", statuses=list(STATUSES))

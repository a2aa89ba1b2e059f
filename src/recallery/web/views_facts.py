"""A memory's Facts page: the current extracted entries as one flat table, newest first by
valid time, paged on the server and filtered by type, trust, status, forgotten, user and text
(REST's filters by REST's names and values; the old single status field's enabled, disabled,
forgotten and kept are still read); each row with its source turn, use count and actions
(confirm, reject, disable or enable, forget or restore, correct inline). Every action is the
engine's single operation; without scripts each is a plain form that comes back to this page,
with htmx only the row is swapped."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from recallery.engine import Engine
from recallery.models import Principal
from recallery.requests import FactPage
from recallery.web.frame import WebDep, WebRoute, Who
from recallery.web.listing import PageSize, by_rest_values, flag, listed, listing

router = APIRouter(route_class=WebRoute, include_in_schema=False)

#: The page's filter fields (query parameters): REST's Facts filters.
FILTERS = ("message_type", "trust", "status", "forgotten", "user_id", "text")
#: The old status field's values (one field for both), each read as the REST filter it is.
OLD_STATUSES = {
    "enabled": ("status", "true"),
    "disabled": ("status", "false"),
    "forgotten": ("forgotten", "true"),
    "kept": ("forgotten", "false"),
}


def facts(
    engine: Engine, me: Principal, memory_id: str, wanted: Mapping[str, str], number: int, size: int
) -> FactPage:
    """The page of facts ``wanted`` selects (the engine checks each field, naming it)."""
    return engine.facts(
        me,
        memory_id,
        types=wanted.get("message_type"),
        trust=wanted.get("trust"),
        user_id=wanted.get("user_id"),
        text=wanted.get("text"),
        page=number,
        page_size=size,
        status=flag(wanted, "status"),
        forgotten=flag(wanted, "forgotten"),
    )


@router.get("/memories/{memory_id}/facts")
def facts_page(
    request: Request,
    parts: WebDep,
    who: Who,
    memory_id: str,
    size: PageSize,
    number: Annotated[int, Query(alias="page", ge=1, le=10**6)] = 1,
) -> Response:
    engine, me = parts.engine, who.principal
    shown = listing(request, parts, who, memory_id, FILTERS, number, size)
    shown = replace(shown, wanted=by_rest_values(shown.wanted, OLD_STATUSES))

    def select(wanted: Mapping[str, str], number: int, size: int) -> FactPage:
        return facts(engine, me, shown.memory.id, wanted, number, size)

    return listed(request, who, "facts.html", shown, select, tab="facts")

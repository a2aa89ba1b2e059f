"""The request log's page (its address stays ``/requests``): who called what, filtered by key,
route, status and slowness (the filters' REST names); an administrator sees every caller,
anyone else their own calls. Keys, users and memories are named (each linking to its page)
where the viewer may see their names."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from recallery.engine import Engine
from recallery.errors import Forbidden, InvalidInput, NotFound
from recallery.models import ApiKey, Principal
from recallery.requests.requestlog import FILTERS, parse_query
from recallery.web.frame import WebDep, WebRoute, Who, page

router = APIRouter(route_class=WebRoute, include_in_schema=False)
#: Requests on one page.
PAGE = 50
#: The filters the page's form offers.
SHOWN = ("key", "route", "status", "slow")

Text = Annotated[str | None, Query(max_length=200)]


@router.get("/requests")
def request_log(
    request: Request,
    parts: WebDep,
    who: Who,
    key: Text = None,
    route: Text = None,
    status: Text = None,
    slow: Text = None,
    number: Annotated[int, Query(alias="page", ge=1, le=10**6)] = 1,
) -> Response:
    form = {"key": key or "", "route": route or "", "status": status or "", "slow": slow or ""}
    errors: dict[str, str] = {}
    try:
        q = parse_query(form, limit=PAGE, offset=(number - 1) * PAGE)
        found, total = parts.engine.request_log(who.principal, q)
    except InvalidInput as exc:
        errors[exc.field or "status"] = str(exc)
        found, total = [], 0
    users = {r.user_id for r in found if r.user_id}
    memories = {m for r in found for m in r.memory_ids}
    me = who.principal
    return page(
        request,
        who,
        "requests.html",
        400 if errors else 200,
        rows=found,
        keys=_keys(parts.engine, me, users),
        user_names=parts.engine.user_names(users),
        memory_names=_memory_names(parts.engine, me, memories),
        total=total,
        number=number,
        pages=max(1, -(-total // PAGE)),
        form=form,
        help={name: FILTERS[name] for name in SHOWN},
        errors=errors,
        query=urlencode({k: v for k, v in form.items() if v}),
        tab="requests",
    )


def _keys(engine: Engine, me: Principal, users: set[str]) -> dict[str, ApiKey]:
    """The keys of the callers on the page, by id, where the viewer may list them (their
    own with a key that may manage; an administrator's, anyone's): the rest show their id."""
    found: dict[str, ApiKey] = {}
    for user_id in users:
        try:
            found.update((k.id, k) for k in engine.list_api_keys(me, user_id))
        except (Forbidden, NotFound):
            continue
    return found


def _memory_names(engine: Engine, me: Principal, ids: set[str]) -> dict[str, str]:
    """The names of the memories the page's requests named that the viewer may read (one
    query); a deleted or unreadable one shows its id."""
    if not ids:
        return {}
    return {
        m.id: m.name for m in engine.list_memories(me, ids=sorted(ids), page_size=len(ids)).items
    }

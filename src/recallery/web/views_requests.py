"""The request log page (``/requests``): who called what, filtered by key, route, status and
slowness; an administrator sees every caller, anyone else their own calls."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from recallery.errors import InvalidInput
from recallery.requestlog import FILTERS, parse_query
from recallery.web.frame import WebDep, WebRoute, Who, page

router = APIRouter(route_class=WebRoute, include_in_schema=False)
#: Requests on one page.
PAGE = 50
#: The filters the page's form offers.
SHOWN = ("key", "route", "status", "slow")

Text = Annotated[str | None, Query(max_length=200)]


@router.get("/requests")
def requests(
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
        found, total = parts.engine.requests(who.principal, q)
    except InvalidInput as exc:
        errors[exc.field or "status"] = str(exc)
        found, total = [], 0
    return page(
        request,
        who,
        "requests.html",
        400 if errors else 200,
        rows=found,
        total=total,
        number=number,
        pages=max(1, -(-total // PAGE)),
        form=form,
        help={name: FILTERS[name] for name in SHOWN},
        errors=errors,
        query=urlencode({k: v for k, v in form.items() if v}),
        tab="requests",
    )

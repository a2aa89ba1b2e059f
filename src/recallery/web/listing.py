"""What a memory's paged, filtered tables share (the Messages, Facts and review pages): the
memory, the filter fields given (by the names REST gives them; the pages' old short names are
still read), the page sizes offered (``page_size``, as REST names it; the old ``size`` is still
read, on the People page too), and the page itself: the rows the filters select, or, when the
engine refuses a filter, the first page unfiltered with its reason beside the form (400)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Protocol, TypeVar
from urllib.parse import urlencode

from fastapi import Depends, Query, Request
from starlette.responses import Response

from recallery.errors import InvalidInput
from recallery.models import Memory
from recallery.web.frame import Viewer, Web, page

#: The page sizes offered (any other asked for is the default, 50).
SIZES = (25, 50, 100)
#: The filters' old short names on the pages, each read as the REST name it now has (issue
#: 56: one name per filter in every layer), kept one release for links already shared.
OLD_NAMES = {
    "agent": "agent_id",
    "session": "session_id",
    "user": "user_id",
    "type": "message_type",
}
#: The spellings a yes-or-no filter takes, as REST's query parameters read them.
YES_NO = {"true": True, "false": False, "1": True, "0": False, "yes": True, "no": False}
#: A page size asked for: REST's ``page_size``, or the pages' old ``size`` (one release).
Rows = Annotated[int | None, Query(ge=1, le=100)]


def flag(wanted: Mapping[str, str], name: str) -> bool | None:
    """The yes-or-no filter ``name`` (true or false; absent: either), refused naming it."""
    value = wanted.get(name)
    if value is None:
        return None
    if value.lower() not in YES_NO:
        raise InvalidInput(name, f"{name} must be true or false.")
    return YES_NO[value.lower()]


def by_rest_values(
    wanted: Mapping[str, str], old_statuses: Mapping[str, tuple[str, str]]
) -> dict[str, str]:
    """``wanted`` with an old value of the status field (a page's ``old_statuses``: each the
    REST filter and value it is, ``status`` or ``forgotten``, true or false) read as that
    filter, unless that is given too, and each yes-or-no spelling REST takes (1, yes, ...)
    written true or false."""
    found = dict(wanted)
    old = old_statuses.get(found.get("status", "").lower())
    if old is not None:
        del found["status"]
        found.setdefault(*old)
    for name in ("status", "forgotten"):
        given = YES_NO.get(found.get(name, "").lower())
        if given is not None:
            found[name] = "true" if given else "false"
    return found


class Counted(Protocol):
    """A page of rows that knows how many rows there are in all."""

    @property
    def total(self) -> int: ...


Found = TypeVar("Found", bound=Counted)
#: The rows of a page: ``select(wanted, number, size)`` (the engine checks each filter field).
Select = Callable[[Mapping[str, str], int, int], Found]


def rows(page_size: Rows = None, size: Rows = None) -> int:
    """The rows a page shows: ``page_size`` (or the old ``size``) when it is one of
    :data:`SIZES`, else 50."""
    asked = page_size or size
    return asked if asked in SIZES else 50


#: The rows a listing page shows (a route's dependency: ``page_size``, or the old ``size``).
PageSize = Annotated[int, Depends(rows)]


def by_wire_name(
    values: Mapping[str, Any], old_names: Mapping[str, str] = OLD_NAMES
) -> dict[str, Any]:
    """``values`` with each old short name read as its REST name, unless that is given too."""
    found = dict(values)
    for old, new in old_names.items():
        if found.get(old) and not found.get(new):
            found[new] = found[old]
    return found


def chosen(values: Mapping[str, Any], fields: Iterable[str]) -> dict[str, str]:
    """The filter ``fields`` that were given a value."""
    return {k: str(values[k]).strip() for k in fields if values.get(k) and str(values[k]).strip()}


@dataclass(frozen=True)
class Listing:
    """One request of a listing page: its memory, the filters given, the page and its size."""

    memory: Memory
    wanted: dict[str, str]
    number: int
    size: int


def listing(
    request: Request,
    parts: Web,
    who: Viewer,
    memory_id: str,
    fields: Iterable[str],
    number: int,
    size: int,
) -> Listing:
    """Page ``number`` of ``size`` rows of a memory the viewer may read, filtered by the
    ``fields`` of ``request``'s query that have a value."""
    memory = parts.engine.get_memory(who.principal, memory_id)
    wanted = chosen(by_wire_name(request.query_params), fields)
    return Listing(memory, wanted, number, size if size in SIZES else 50)


def listed(
    request: Request,
    who: Viewer,
    template: str,
    shown: Listing,
    select: Select[Found],
    **ctx: Any,
) -> Response:
    """The listing page: the rows ``shown`` selects, or the first page unfiltered with the
    engine's reason when it refuses a filter; ``ctx``: what the page shows besides."""
    try:
        found, error = select(shown.wanted, shown.number, shown.size), ""
    except InvalidInput as exc:
        found, error = select({}, 1, shown.size), str(exc)
    return page(
        request,
        who,
        template,
        400 if error else 200,
        memory=shown.memory,
        found=found,
        wanted=shown.wanted,
        error=error,
        number=shown.number,
        size=shown.size,
        sizes=SIZES,
        pages=max(1, -(-found.total // shown.size)),
        query=urlencode({**shown.wanted, "page_size": str(shown.size)}),
        here=request.url.path + (f"?{request.url.query}" if request.url.query else ""),
        **ctx,
    )

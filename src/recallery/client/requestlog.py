"""The SDK's request log: who read what (an administrator: every caller; else the caller's
own calls), and an entry's access history (shapes from :mod:`recallery.requestlog`)."""

from __future__ import annotations

from recallery import requestlog
from recallery.client.call import Call
from recallery.models import Page
from recallery.requestlog import EntryReads, LoggedRequest, RequestQuery
from recallery.requests.either import alone


def requests(
    where: RequestQuery | None = None,
    *,
    key: str | None = None,
    user: str | None = None,
    route: str | None = None,
    status: int | None = None,
    slow: float | None = None,
    memory: str | None = None,
    entry: int | None = None,
    page: int = 1,
    page_size: int = 30,
) -> Call[Page[LoggedRequest]]:
    """Logged requests, newest first, filtered as ``GET /admin/requests`` filters them;
    a :class:`~recallery.requestlog.RequestQuery` as ``where`` names the filters instead
    (its own paging left to ``page`` and ``page_size``)."""
    params: dict[str, object] = {"key": key, "user": user, "route": route, "status": status}
    params.update({"slow": slow, "memory": memory, "entry": entry})
    if where is not None:
        alone(where, params)
        params = requestlog.query_filters(where)
    params.update({"page": page, "page_size": page_size})
    return Call("GET", "/admin/requests", requestlog.requests_page_from_dict, params=params)


def entry_reads(memory_id: str, message_id: int) -> Call[EntryReads]:
    """How often the entry was read, by which keys, and when last (from the request log)."""
    path = f"/messages/{memory_id}:{message_id}/reads"
    return Call("GET", path, requestlog.entry_reads_from_dict)

"""The SDK's request log: who read what (an administrator: every caller; else the caller's
own calls), and an entry's access history (types from :mod:`recallery.requests.requestlog`,
shapes from :mod:`recallery.wire.requestlog`). ``requests`` is the log's old name, kept one
release."""

from __future__ import annotations

import warnings

from recallery.client.call import Call
from recallery.models import Page
from recallery.requests.either import alone
from recallery.requests.requestlog import (
    EntryReads,
    LoggedRequest,
    RequestQuery,
    query_filters,
    request_filter_fields,
)
from recallery.wire.requestlog import entry_reads_from_dict, requests_page_from_dict


def request_log(
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
    a :class:`~recallery.requests.requestlog.RequestQuery` as ``where`` names the filters instead
    (its own paging left to ``page`` and ``page_size``)."""
    given = locals()
    params = {s.metadata["wire"]: given[s.metadata["arg"]] for s in request_filter_fields()}
    if where is not None:
        alone(where, params)
        params = query_filters(where)
    params.update({"page": page, "page_size": page_size})
    return Call("GET", "/admin/requests", requests_page_from_dict, params=params)


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
    """Deprecated: :func:`request_log`'s old name, kept one release; it warns."""
    warnings.warn("requests is deprecated: use request_log", DeprecationWarning, stacklevel=3)
    return request_log(
        where,
        key=key,
        user=user,
        route=route,
        status=status,
        slow=slow,
        memory=memory,
        entry=entry,
        page=page,
        page_size=page_size,
    )


def entry_reads(memory_id: str, message_id: int) -> Call[EntryReads]:
    """How often the entry was read, by which keys, and when last (from the request log)."""
    path = f"/messages/{memory_id}:{message_id}/reads"
    return Call("GET", path, entry_reads_from_dict)

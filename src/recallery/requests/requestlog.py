"""The request log's types, and how a request's parts reach its record on the way through
(its JSON is :mod:`recallery.wire.requestlog`).

Every REST, web and MCP call becomes one :class:`LoggedRequest`: when, which key and user,
the channel and the route template (or MCP tool), the status, the latency, the memories it
named and, for a search or context, the entry ids it returned. The edge that answers a call
opens a :class:`Call` with :func:`begin`; what it learns on the way (the caller, once
authenticated; what a search returned) is noted into it through :func:`note_caller` and
:func:`note_search`, which do nothing outside a call. Query text is personal data: a
:class:`Call` keeps it, and the log stores it only when the operator turns that on.

A listing's filters are declared once, as fields of :class:`RequestQuery` (wire name, SDK
keyword, kind, what it filters on): the REST query and its OpenAPI, the web form, the SDK's and
the bound engine's keywords come from them (:func:`request_filter_fields`).
"""

from __future__ import annotations

import contextvars
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import Field, dataclass, field, fields
from datetime import datetime
from typing import Any

from recallery.errors import InvalidInput
from recallery.models import Principal
from recallery.requests.messages import said

#: Channels a request comes in by.
CHANNELS = ("rest", "web", "mcp")
#: How a logged entry was touched: returned by a search or context (what the use count LRU
#: eviction reads counts too), or named by the address of a read.
RETURNED, NAMED = "returned", "named"


@dataclass
class Call:
    """A request being answered: what its edge and the engine learn about it."""

    channel: str
    route: str = ""
    key_id: str = ""
    user_id: str = ""
    tenant_id: str = ""
    memory_ids: set[str] = field(default_factory=set)
    returned: list[int] = field(default_factory=list)
    named: list[int] = field(default_factory=list)
    query: str | None = None


@dataclass(frozen=True)
class LoggedRequest:
    """One row of the request log."""

    id: str
    at: datetime
    channel: str
    route: str
    status: int
    latency_ms: float
    key_id: str = ""
    user_id: str = ""
    memory_ids: tuple[str, ...] = ()
    entry_ids: tuple[int, ...] = ()
    query: str | None = None


@dataclass(frozen=True)
class RequestQuery:
    """Which logged requests to list, newest first; ``None`` leaves a field unfiltered.
    ``slow_ms``: only requests that took at least this long. ``within`` (set by the service
    for a scoped key, never from the wire): only requests that named memories, all of them
    among these, or that ``own_key`` made."""

    key_id: str | None = said("key", "key", "text", "the API key's id")
    user_id: str | None = said("user", "user", "text", "the calling user's id")
    route: str | None = said(
        "route",
        "route",
        "text",
        "the route template, e.g. /api/v1/messages/search, or the MCP tool",
    )
    status: int | None = said(
        "status", "status", "status", "the HTTP status (an MCP tool: 200, or 500 when it failed)"
    )
    slow_ms: float | None = said(
        "slow", "slow", "slow", "only requests that took at least this many milliseconds"
    )
    memory_id: str | None = said(
        "memory", "memory", "text", "a memory id the request named or searched"
    )
    entry_id: int | None = said(
        "entry", "entry", "entry", "an entry id the request returned or named"
    )
    limit: int = 100
    offset: int = 0
    within: frozenset[str] | None = None
    own_key: str = ""


def request_filter_fields() -> tuple[Field[Any], ...]:
    """The declared filters of :class:`RequestQuery` (``metadata``: wire, arg, kind, about);
    its paging and scoping fields are not filters."""
    return tuple(spec for spec in fields(RequestQuery) if "wire" in spec.metadata)


#: The filters of a request-log listing by wire name (REST query, web form, SDK argument),
#: each with what it filters on (from :class:`RequestQuery`'s declaration).
FILTERS: dict[str, str] = {
    spec.metadata["wire"]: spec.metadata["about"] for spec in request_filter_fields()
}

#: The text each numeric kind of filter takes (its OpenAPI pattern too: the two cannot differ):
#: an HTTP status; milliseconds, up to 8 digits (a day is 86,400,000); an entry id, up to 15.
NUMBERS: dict[str, tuple[str, str]] = {
    "status": ("[1-5][0-9]{2}", "an HTTP status from 100 to 599"),
    "slow": ("[0-9]{1,8}(\\.[0-9]{1,3})?", "milliseconds, at most 8 digits"),
    "entry": ("[0-9]{1,15}", "an entry id of at most 15 digits"),
}
#: What each numeric kind's text is read as.
_READ: dict[str, type[Any]] = {"status": int, "slow": float, "entry": int}


def parse_query(
    values: Mapping[str, str | None], limit: int = 100, offset: int = 0
) -> RequestQuery:
    """A :class:`RequestQuery` from text filters by wire name (empty or missing: no filter);
    a value that cannot be one is refused, naming its filter."""
    found: dict[str, Any] = {}
    for spec in request_filter_fields():
        wire, kind = spec.metadata["wire"], spec.metadata["kind"]
        text = (values.get(wire) or "").strip() or None
        found[spec.name] = text if kind not in NUMBERS else _number(text, wire, kind)
    return RequestQuery(**found, limit=limit, offset=offset)


def query_filters(q: RequestQuery) -> dict[str, object]:
    """A query's filters by wire name, as :func:`parse_query` reads them back."""
    return {spec.metadata["wire"]: getattr(q, spec.name) for spec in request_filter_fields()}


def _number(text: str | None, name: str, kind: str) -> Any:
    if text is None:
        return None
    pattern, what = NUMBERS[kind]
    if not re.fullmatch(pattern, text):
        raise InvalidInput(name, f"{name}: {FILTERS[name]}; {what}.")
    return _READ[kind](text)


@dataclass(frozen=True)
class KeyReads:
    """How often one key read an entry, and when last."""

    key_id: str
    user_id: str
    count: int
    last_at: datetime


@dataclass(frozen=True)
class EntryReads:
    """An entry's access history from the log: reads by key, newest first. ``returned``
    counts the searches and contexts that returned it (what its use count counts too, within
    the log's retention); ``named`` the reads that named it by its address."""

    message_id: int
    returned: int
    named: int
    by_key: tuple[KeyReads, ...]
    use_count: int
    last_at: datetime | None = None

    @property
    def count(self) -> int:
        return self.returned + self.named


_CALL: contextvars.ContextVar[Call | None] = contextvars.ContextVar(
    "recallery_request_call", default=None
)


@contextmanager
def begin(call: Call) -> Iterator[Call]:
    """Make ``call`` the current one for this context (and threads started from it)."""
    token = _CALL.set(call)
    try:
        yield call
    finally:
        _CALL.reset(token)


def current() -> Call | None:
    return _CALL.get()


def note_caller(principal: Principal) -> None:
    """The authenticated caller of the current call."""
    call = _CALL.get()
    if call is not None:
        call.key_id = principal.key_id
        call.user_id = principal.user_id
        call.tenant_id = principal.user_id


def note_search(query: str, memory_ids: Iterable[str], returned: Sequence[int]) -> None:
    """A search or context of the current call: its query, memories and returned ids."""
    call = _CALL.get()
    if call is not None:
        call.query = query
        call.memory_ids.update(memory_ids)
        call.returned.extend(returned)


__all__ = [
    "CHANNELS",
    "FILTERS",
    "NAMED",
    "NUMBERS",
    "RETURNED",
    "Call",
    "EntryReads",
    "KeyReads",
    "LoggedRequest",
    "RequestQuery",
    "begin",
    "current",
    "note_caller",
    "note_search",
    "parse_query",
    "query_filters",
    "request_filter_fields",
]

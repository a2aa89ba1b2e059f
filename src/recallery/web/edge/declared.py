"""The REST edges of the declared requests: the search's query parameters and JSON body, and
the Messages and Facts listings', the review queue's, the audit log's and the request log's
filters, built from the fields of :class:`~recallery.requests.SearchRequest`,
:class:`~recallery.requests.MessageFilter`, :class:`~recallery.requests.FactFilter`,
:class:`~recallery.requests.ReviewFilter`, :class:`~recallery.requests.AuditFilter` and
:class:`~recallery.requests.requestlog.RequestQuery`, and the values sent read back into them.

A field declares its wire name, kind of value, default and description once; this module
knows, per kind, how the API documents and reads it (the schema of a query parameter and of
a body field, and whether it is a list). Adding a search knob or a list filter is a field in
:mod:`recallery.requests`; nothing here names one. Values are read as sent, as RAGFlow does,
and checked by the service that uses them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import MISSING, Field
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple

from fastapi import Query
from pydantic import create_model

from recallery.errors import InvalidInput
from recallery.requests import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_TOP_N,
    AuditFilter,
    FactFilter,
    MessageFilter,
    ReviewFilter,
    SearchRequest,
    audit_filter_fields,
    fact_filter_fields,
    message_filter_fields,
    review_filter_fields,
    search_fields,
)
from recallery.requests.requestlog import NUMBERS, request_filter_fields
from recallery.web.edge import params
from recallery.web.edge import schemas as S
from recallery.web.edge.bodies import IDS, TRUST, TYPES, Lenient, field_of, requires


class Kind(NamedTuple):
    """How one kind of declared value is documented in a query string and in a body."""

    query: S.Schema
    body: S.Schema
    #: Sent as a list in a query string (repeated or comma-separated).
    listed: bool = False
    #: Read by FastAPI as a boolean (true/false, 1/0, yes/no), not as text.
    boolean: bool = False


def _choices(item: S.Schema) -> S.Schema:
    """A list of ``item``'s values in a body, or one text with them comma-separated."""
    return S.nullable({"anyOf": [{"type": "array", "items": item}, S.listed(item["enum"])]})


_WHOLE: S.Schema = {"type": "integer", "minimum": 0}
#: The kinds of the search's fields.
SEARCH_KINDS: dict[str, Kind] = {
    "query": Kind(S.NON_BLANK, S.NON_BLANK),
    "memories": Kind(S.MEMORY_ID, IDS, listed=True),
    "size": Kind(S.LENIENT_SIZE, S.LENIENT_TOP_N),
    "unit": Kind(S.UNIT, S.nullable(S.UNIT)),
    "id": Kind(S.TEXT, S.nullable(S.TEXT)),
    "types": Kind(S.ENTRY_TYPE, TYPES, listed=True),
    "time": Kind(S.TIME, S.nullable(S.TIME)),
    "fusion": Kind(S.FUSION, {**S.FUSION, "enum": [*S.FUSION["enum"], None]}),
    "trust": Kind(S.SEARCHABLE_TRUST, TRUST, listed=True),
    "span": Kind({**_WHOLE, "maximum": 5}, S.nullable({**_WHOLE, "maximum": 5})),
    "length": Kind(_WHOLE, S.nullable(_WHOLE)),
    "origins": Kind(S.ORIGIN, _choices(S.ORIGIN), listed=True),
    "flag": Kind(S.BOOLEAN, S.nullable(S.BOOLEAN), boolean=True),
}
#: The kinds of the Messages list's filters.
FILTER_KINDS: dict[str, Kind] = {
    "agents": Kind(S.TEXT, S.nullable({"type": "array", "items": S.TEXT}), listed=True),
    "text": Kind(S.TEXT, S.nullable(S.TEXT)),
    "types": Kind(S.ENTRY_TYPE, TYPES, listed=True),
    "flag": Kind(S.BOOLEAN, S.nullable(S.BOOLEAN), boolean=True),
    "trust": Kind(S.TRUST, _choices(S.TRUST), listed=True),
    "origins": Kind(S.ORIGIN, _choices(S.ORIGIN), listed=True),
    "time": Kind(S.TIME, S.nullable(S.TIME)),
}

#: The kinds of the Facts listing's filters.
FACT_KINDS: dict[str, Kind] = {
    "fact_types": Kind(S.FACT_TYPE, _choices(S.FACT_TYPE), listed=True),
    "trust": FILTER_KINDS["trust"],
    "flag": FILTER_KINDS["flag"],
    "text": FILTER_KINDS["text"],
}


def _or_empty(schema: S.Schema) -> S.Schema:
    """An optional filter in a query string: empty text means no filter."""
    return {"anyOf": [schema, {"enum": [""]}]}


#: The kinds of the audit log's filters.
AUDIT_KINDS: dict[str, Kind] = {
    "memory": Kind(_or_empty(S.MEMORY_ID), S.nullable(S.MEMORY_ID)),
    "message": Kind(_or_empty(S.MESSAGE_ID), S.nullable(S.MESSAGE_ID)),
    "free": Kind({"type": "string"}, S.nullable({"type": "string"})),
    "time": Kind(_or_empty(S.TIME), S.nullable(S.TIME)),
}

#: The kinds of the request log's filters: text, or a number sent as text (its pattern the
#: one the request log parses with, or empty: no filter).
REQUEST_KINDS: dict[str, Kind] = {
    "text": Kind({"type": "string"}, S.nullable({"type": "string"})),
    **{
        name: Kind(
            {"type": "string", "pattern": f"^\\s*({pattern})?\\s*$"},
            S.nullable({"type": "string"}),
        )
        for name, (pattern, _) in NUMBERS.items()
    },
}


def wire_default(spec: Field[Any]) -> Any:
    """A field's default as the wire carries it (None: no default to document)."""
    default = spec.default
    if default is MISSING or default is None:
        return None
    return getattr(default, "value", default)


def _about(spec: Field[Any], kind: Kind) -> str:
    about = str(spec.metadata["about"])
    if kind.listed:
        about += " Repeated or comma-separated."
    if kind.query is S.LENIENT_SIZE:
        about += f" {params.SIZE}"
    default = wire_default(spec)
    if isinstance(default, bool):
        default = str(default).lower()  # as JSON and a query string write it
    return about if default is None else f"{about.rstrip('.')} (default {default})."


def _parameter(spec: Field[Any], kind: Kind) -> inspect.Parameter:
    schema = {"type": "array", "items": dict(kind.query)} if kind.listed else dict(kind.query)
    default = wire_default(spec)
    if default is not None and schema.get("type") == "string":
        default = str(default)  # what a query string would carry (FastAPI documents it)
    if kind.boolean:
        found: Any = Query(description=_about(spec, kind))
    else:
        found = params.query(schema, _about(spec, kind))
    parsed: Any = list[str] | None if kind.listed else bool | None if kind.boolean else str | None
    return inspect.Parameter(
        spec.metadata["wire"],
        inspect.Parameter.KEYWORD_ONLY,
        default=default,
        annotation=Annotated[parsed, found],
    )


def query_parameters(
    specs: Iterable[Field[Any]], kinds: Mapping[str, Kind]
) -> Callable[..., dict[str, Any]]:
    """A FastAPI dependency taking one query parameter per declared field (by its wire
    name, documented as its kind says) and answering the values sent, by wire name."""

    def sent(**values: Any) -> dict[str, Any]:
        return values

    declared = [_parameter(spec, kinds[spec.metadata["kind"]]) for spec in specs]
    sent.__signature__ = inspect.Signature(declared)  # type: ignore[attr-defined]
    return sent


#: The search's query parameters (GET /messages/search and /messages/context).
search_parameters = query_parameters(search_fields(), SEARCH_KINDS)
#: The Messages list's filters (GET /memories/{memory_id}).
filter_parameters = query_parameters(message_filter_fields(), FILTER_KINDS)
#: The Facts listing's filters (GET /memories/{memory_id}/facts).
fact_parameters = query_parameters(fact_filter_fields(), FACT_KINDS)
#: The review queue's filters (GET /memories/{memory_id}/review).
review_parameters = query_parameters(review_filter_fields(), FACT_KINDS)
#: The audit log's filters (GET /audit).
audit_parameters = query_parameters(audit_filter_fields(), AUDIT_KINDS)
#: The request log's filters (GET /admin/requests), read by ``requestlog.parse_query``.
request_parameters = query_parameters(request_filter_fields(), REQUEST_KINDS)


def _body_field(spec: Field[Any]) -> tuple[Any, Any]:
    kind = SEARCH_KINDS[spec.metadata["kind"]]
    return Any, field_of(kind.body, _about(spec, kind))


class _Context(Lenient):
    model_config = requires("query", "memory_id")


_CONTEXT_FIELDS: dict[str, Any] = {
    **{spec.metadata["wire"]: _body_field(spec) for spec in search_fields()},
    "max_tokens": (
        Any,
        field_of(
            S.nullable({"type": "integer", "minimum": 1}),
            f"Token budget of the block (default {DEFAULT_MAX_TOKENS}).",
        ),
    ),
}
if TYPE_CHECKING:
    ContextQuery = _Context
else:
    #: The body of POST /messages/context: every search field, and the token budget.
    ContextQuery = create_model("ContextQuery", __base__=_Context, **_CONTEXT_FIELDS)


def _listed(value: object, field: str) -> object:
    """A list filter: a list is split as ids are; one text (maybe comma-separated) is passed
    on as sent."""
    if value is None or isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise InvalidInput(field, f"{field} must be a list or comma-separated text.")
    return params.ids(value, field)


def _size(value: object, field: str) -> object:
    """``top_n`` read RAGFlow's lenient way (invalid or below 1: 30)."""
    if value is None:
        return None
    return params.size(str(value), DEFAULT_TOP_N, field)


#: How a kind's value sent is read (a list kind without an entry: :func:`_listed`).
_READERS: dict[str, Callable[[object, str], object]] = {
    "memories": lambda value, field: tuple(params.ids(value, field)),
    "size": _size,
    "fusion": lambda value, field: None if value == "" else value,
    "span": lambda value, field: params.whole(value),
    "length": lambda value, field: params.whole(value),
    "flag": lambda value, field: _flag(value),
}


def _flag(value: object) -> object:
    """A yes or no sent as text (a form's "true", "1", "on") read as a boolean; anything
    else is passed on for the service to refuse, naming the field."""
    if isinstance(value, str):
        return {
            "true": True,
            "1": True,
            "on": True,
            "yes": True,
            "false": False,
            "0": False,
            "off": False,
            "no": False,
            "": None,
        }.get(value.strip().lower(), value)
    return value


def search_request(sent: Mapping[str, Any]) -> SearchRequest:
    """One search request from query parameters or a JSON body, by wire name: lists split,
    ``top_n`` read leniently; what was not sent takes the request's defaults. The service
    checks every value (a query that is missing included)."""
    values: dict[str, Any] = {"query": sent.get("query")}
    for spec in search_fields():
        wire, kind = spec.metadata["wire"], spec.metadata["kind"]
        read = _READERS.get(kind, _listed if SEARCH_KINDS[kind].listed else None)
        value = sent.get(wire) if read is None else read(sent.get(wire), wire)
        if value is not None:
            values[spec.name] = value
    return SearchRequest(**values)


def message_filter(sent: Mapping[str, Any]) -> MessageFilter:
    """The Messages filters sent as query parameters, by wire name, as sent (lists split;
    empty text filters nothing); the service checks each."""
    values: dict[str, Any] = {}
    for spec in message_filter_fields():
        wire = spec.metadata["wire"]
        value = sent.get(wire)
        if FILTER_KINDS[spec.metadata["kind"]].listed:
            value = params.id_list(value, wire) or None
        values[wire] = params.optional(value) if isinstance(value, str) else value
    return MessageFilter.sent(values)


def _sent(
    specs: Iterable[Field[Any]], kinds: Mapping[str, Kind], sent: Mapping[str, Any]
) -> dict[str, Any]:
    """Filters sent as query parameters, by wire name, as sent (lists split; empty text
    filters nothing)."""
    values: dict[str, Any] = {}
    for spec in specs:
        wire = spec.metadata["wire"]
        value = sent.get(wire)
        if kinds[spec.metadata["kind"]].listed:
            value = params.id_list(value, wire) or None
        values[wire] = params.optional(value) if isinstance(value, str) else value
    return values


def fact_filter(sent: Mapping[str, Any]) -> FactFilter:
    """The Facts filters sent as query parameters; the service checks each."""
    return FactFilter.sent(_sent(fact_filter_fields(), FACT_KINDS, sent))


def review_filter(sent: Mapping[str, Any]) -> ReviewFilter:
    """The review queue's filters sent as query parameters; the service checks each."""
    return ReviewFilter.sent(_sent(review_filter_fields(), FACT_KINDS, sent))


def audit_filter(sent: Mapping[str, Any]) -> AuditFilter:
    """The audit log's filters sent as query parameters (empty text filters nothing); the
    service checks each."""
    return AuditFilter.sent(_sent(audit_filter_fields(), AUDIT_KINDS, sent))


__all__ = [
    "AUDIT_KINDS",
    "FACT_KINDS",
    "FILTER_KINDS",
    "REQUEST_KINDS",
    "SEARCH_KINDS",
    "ContextQuery",
    "Kind",
    "audit_filter",
    "audit_parameters",
    "fact_filter",
    "fact_parameters",
    "filter_parameters",
    "message_filter",
    "request_parameters",
    "review_filter",
    "review_parameters",
    "search_parameters",
    "search_request",
    "wire_default",
]

"""A request object or its fields: the SDK and the engine bound to a caller
(:class:`recallery.acting.Acting`) take a search, a Messages, Facts, review or audit filter or
a request-log query either as one typed request or as keyword arguments, and read both the same
way here.

Giving a request and one of its fields too is refused, naming the field: which of the two
should win is not something to guess.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, fields
from typing import Any

from recallery.errors import InvalidInput
from recallery.requests.audit import AuditFilter, audit_filter_fields
from recallery.requests.curation import (
    FactFilter,
    ReviewFilter,
    fact_filter_fields,
    review_filter_fields,
)
from recallery.requests.messages import MessageFilter, message_filter_fields
from recallery.requests.search import SearchRequest, search_fields, search_knobs


def alone(request: Any, sent: Mapping[str, object]) -> None:
    """Refuse ``sent`` arguments beside ``request``: any that is not None and not the
    default of the request's field of that name."""
    defaults = {f.name: f.default for f in fields(request) if f.default is not MISSING}
    for name, value in sent.items():
        if value is not None and value != defaults.get(name):
            kind = type(request).__name__
            raise InvalidInput(name, f"{name}: give a {kind} or its fields, not both.")


def search_values(
    query: str | SearchRequest, memory_ids: Sequence[str] | None, knobs: Mapping[str, Any]
) -> dict[str, Any]:
    """A search's values by field name: every field of a :class:`SearchRequest` given as
    the query, else the query, the memories and the knobs given (None left out: the
    request's default, or the server's setting)."""
    if isinstance(query, SearchRequest):
        alone(query, {"memory_ids": memory_ids, **knobs})
        return {spec.name: getattr(query, spec.name) for spec in search_fields()}
    given = {"query": query, "memory_ids": memory_ids, **knobs}
    return {name: value for name, value in given.items() if value is not None}


def search_request(
    query: str | SearchRequest, memory_ids: Sequence[str] | None, knobs: Mapping[str, Any]
) -> SearchRequest:
    """The search request the SDK's arguments describe (values as given: the search
    service checks each)."""
    if isinstance(query, SearchRequest):
        alone(query, {"memory_ids": memory_ids, **knobs})
        return query
    values = search_values(query, memory_ids, knobs)
    values["memory_ids"] = tuple(values.get("memory_ids", ()))
    return SearchRequest(**values)


#: The knobs RAGFlow's SDK sends with their defaults; every other knob's SDK default is None
#: (the request's default, or the server's setting).
SENT_BY_DEFAULT = ("top_n", "similarity_threshold", "keywords_similarity_weight")


def search_signature(method: Callable[..., Any]) -> inspect.Signature:
    """``method``'s signature (``self, query, memory_ids``, maybe more, then ``**knobs``)
    with ``**knobs`` spelled out as the SDK's keywords, one per declared knob, so that a
    knob declared in :class:`SearchRequest` reaches every search surface at once."""
    *fixed, _knobs = inspect.signature(method).parameters.values()
    knobs = [
        inspect.Parameter(
            spec.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=spec.default if spec.name in SENT_BY_DEFAULT else None,
            annotation=spec.type,
        )
        for spec in search_knobs()
    ]
    return inspect.signature(method).replace(parameters=[*fixed, *knobs])


def message_filter(where: MessageFilter | None, args: Mapping[str, Any]) -> MessageFilter:
    """The Messages filter given, or the one the SDK's keywords (``arg`` of each field)
    describe, values as given (the service checks each)."""
    if where is not None:
        if not isinstance(where, MessageFilter):
            raise InvalidInput("where", "where must be a MessageFilter (or give its fields).")
        alone(where, args)
        return where
    by_arg = {spec.metadata["arg"]: spec.name for spec in message_filter_fields()}
    return MessageFilter(**{by_arg[k]: v for k, v in args.items() if v is not None})


def fact_filter(where: FactFilter | None, args: Mapping[str, Any]) -> FactFilter:
    """The Facts filter given, or the one the keywords (``arg`` of each field) describe,
    values as given (the curation service checks each)."""
    if where is not None:
        if not isinstance(where, FactFilter):
            raise InvalidInput("where", "where must be a FactFilter (or give its fields).")
        alone(where, args)
        return where
    by_arg = {spec.metadata["arg"]: spec.name for spec in fact_filter_fields()}
    return FactFilter(**{by_arg[k]: v for k, v in args.items() if v is not None})


def review_filter(where: ReviewFilter | None, args: Mapping[str, Any]) -> ReviewFilter:
    """The review queue's filter given, or the one the keywords (``arg`` of each field)
    describe, values as given (the curation service checks each)."""
    if where is not None:
        if not isinstance(where, ReviewFilter):
            raise InvalidInput("where", "where must be a ReviewFilter (or give its fields).")
        alone(where, args)
        return where
    by_arg = {spec.metadata["arg"]: spec.name for spec in review_filter_fields()}
    return ReviewFilter(**{by_arg[k]: v for k, v in args.items() if v is not None})


def audit_filter(where: AuditFilter | None, args: Mapping[str, Any]) -> AuditFilter:
    """The audit log's filter given, or the one the keywords (``arg`` of each field)
    describe, values as given (the activity service checks each)."""
    if where is not None:
        if not isinstance(where, AuditFilter):
            raise InvalidInput("where", "where must be an AuditFilter (or give its fields).")
        alone(where, args)
        return where
    by_arg = {spec.metadata["arg"]: spec.name for spec in audit_filter_fields()}
    return AuditFilter(**{by_arg[k]: v for k, v in args.items() if v is not None})


__all__ = [
    "SENT_BY_DEFAULT",
    "alone",
    "audit_filter",
    "fact_filter",
    "message_filter",
    "review_filter",
    "search_request",
    "search_signature",
    "search_values",
]

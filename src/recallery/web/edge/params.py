"""Query parameters the RAGFlow way: lenient paging, ids repeated or comma-separated."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from fastapi import Path, Query

from recallery import validation as v
from recallery.errors import InvalidInput, NotFound
from recallery.web.edge import schemas as S

#: RAGFlow's REST default page size, also what an invalid or too small size falls back to.
FALLBACK_SIZE = 30
MAX_SIZE = 100


def id_list(values: Sequence[str] | None, field: str) -> list[str]:
    """Ids sent as ``k=a&k=b`` or ``k=a,b`` (or both); at most 100."""
    ids = [part.strip() for value in values or () for part in value.split(",") if part.strip()]
    if len(ids) > v.MAX_IDS:
        raise InvalidInput(field, f"{field} must contain at most {v.MAX_IDS} IDs")
    return ids


def ids(value: object, field: str) -> list[str]:
    """Ids (or names) from a query (a list of strings, each maybe comma-separated) or a
    body (a string or a list of strings)."""
    if value is None:
        return []
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        raise InvalidInput(field, f"{field} must be a list of strings.")
    return id_list(items, field)


#: A count in a query string: at most 18 ASCII digits, spaces around them allowed.
_DIGITS = re.compile(r"\s*[0-9]{1,18}\s*")


def whole(value: object) -> object:
    """A count sent as text (a query string; at most 18 ASCII digits, spaces around them
    allowed): its number; anything else as sent, for the engine to judge."""
    return int(value) if isinstance(value, str) and _DIGITS.fullmatch(value) else value


def page(value: str | None) -> int:
    """The page number; invalid or below 1 means 1."""
    number = _int(value)
    return number if number is not None and number >= 1 else 1


def size(value: str | None, default: int, field: str = "page_size") -> int:
    """A page size, ``limit`` or ``top_n``: missing means ``default``; invalid or below 1
    means 30; above 100 is refused with RAGFlow's wording (which says page_size for all)."""
    if value is None:
        return default
    number = _int(value)
    if number is None or number < 1:
        return FALLBACK_SIZE
    if number > MAX_SIZE:
        raise InvalidInput(field, f"page_size must be less than or equal to {MAX_SIZE}")
    return number


def _int(value: str | None) -> int | None:
    try:
        return None if value is None else int(value.strip())
    except ValueError:
        return None


def path_memory_id(value: str) -> str:
    """A memory id from a path: one that cannot exist answers 404, as RAGFlow does."""
    try:
        return v.memory_id(value)
    except InvalidInput as exc:
        raise NotFound(f"Memory '{value}' not found.") from exc


def optional(value: str | None) -> str | None:
    """An optional filter: empty text means no filter."""
    return value if value else None


def query(schema: Mapping[str, Any], description: str | None = None) -> Any:
    """A query parameter read as text, documented as ``schema``."""
    return Query(description=description, json_schema_extra=S.documented(schema))


def listing(item: Mapping[str, Any], description: str | None = None) -> Any:
    """Repeated (``k=a&k=b``) or comma-separated values, each as ``item`` documents."""
    return query({"type": "array", "items": dict(item)}, description)


#: ``openapi_extra`` key: query parameters the schema marks required though the route reads
#: them as optional, to answer RAGFlow's own message when one is missing.
REQUIRED_QUERY = "x-required-query"
PAGE = "The page, from 1; invalid or below 1 means 1 (RAGFlow's leniency)."
SIZE = "Invalid or below 1 means 30; above 100 is refused."

MemoryId = Annotated[
    str,
    Path(
        description="A memory's id (32 hex digits); any other id answers 404.",
        json_schema_extra=S.documented(S.MEMORY_ID),
    ),
]
MessageId = Annotated[
    str,
    Path(
        description="A message id: a non-negative 64-bit integer in ASCII digits.",
        json_schema_extra=S.documented(S.MESSAGE_ID),
    ),
]
Page = Annotated[str | None, query(S.LENIENT_PAGE, PAGE)]
Size = Annotated[str | None, query(S.LENIENT_SIZE, SIZE)]
Text = Annotated[str | None, query(S.TEXT)]
#: Any text (an exact filter the engine compares, nothing more).
Free = Annotated[str | None, query({"type": "string"})]
Time = Annotated[str | None, query(S.TIME, "ISO 8601; naive means UTC.")]

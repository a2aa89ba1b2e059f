"""A call: one request of the REST API and how to read its answer, built by the operations in
:mod:`recallery.client.memories`, :mod:`~recallery.client.messages` and
:mod:`~recallery.client.accounts`, and sent by either client."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar
from urllib.parse import quote

T = TypeVar("T")
Data = Any


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request and how to turn its envelope's ``data`` into a result."""

    method: str
    path: str
    parse: Callable[[Data], T]
    params: Mapping[str, Any] | None = None
    json: object = None
    content: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    #: The body is the result itself (JSONL), not an envelope.
    raw: bool = False


def segment(value: str) -> str:
    """``value`` as one segment of a path, whatever it holds: ``/``, ``?``, ``#`` and spaces
    percent-encoded, and dots too, so that an id ``..`` or ``.`` is not read as a step up or
    nowhere (httpx, as browsers, resolves such segments before sending)."""
    return quote(value, safe="").replace(".", "%2E")


def query(values: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Query parameters as httpx sends them: None left out, times as ISO text, lists repeated."""
    if values is None:
        return None
    out: dict[str, Any] = {}
    for key, value in values.items():
        if value is None:
            continue
        if isinstance(value, datetime):
            value = value.isoformat()
        elif isinstance(value, (list, tuple, set, frozenset)):
            value = [str(v) for v in value]
        out[key] = value
    return out


def carried(value: Any, *, joined: bool = False) -> Any:
    """A value as the wire carries it: a boolean as true/false, a time as ISO 8601, an enum
    by its value, any other iterable but text as a list of such values (one comma-separated
    text when ``joined``); anything else as it is."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Iterable) and not isinstance(value, str):
        items = [carried(item) for item in value]
        return ",".join(items) if joined else items
    return value


def time_text(value: datetime | str | None) -> str | None:
    return value.isoformat() if isinstance(value, datetime) else value


def none(data: Data) -> None:
    return None

"""Structured values as rows people read: a task's result and an audit event's before and
after are JSON objects in the store, shown on the pages as one ``key: value`` row per field
(nested objects flattened to ``llm · calls``, lists joined), and a change as ``key: old →
new``, rather than as raw JSON."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from markupsafe import Markup, escape

#: Where a nested key joins its parent's (``llm · calls``).
JOIN = " · "
#: An ISO time as the store writes it (shown as the pages show times).
_ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")
#: Keys whose numbers are entry ids in the task's memory (linked to the entry's page).
ENTRY_KEYS = ("entry_ids",)


@dataclass(frozen=True, slots=True)
class Change:
    """One field of an audit event: ``before`` and ``after`` as text, None where the event
    has no value for the field on that side."""

    key: str
    before: str | None
    after: str | None


def text(value: Any) -> str:
    """One value as it reads on a page."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str) and _ISO.match(value):
        try:
            return datetime.fromisoformat(value).astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
        except ValueError:
            return value
    if isinstance(value, list | tuple):
        return ", ".join(text(x) for x in value) if value else "none"
    if isinstance(value, Mapping):
        return ", ".join(f"{k}: {text(v)}" for k, v in value.items()) if value else "none"
    return str(value)


def flat(value: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """The leaves of ``value``, each with its path (``llm · calls``), in the object's order."""
    for key, item in value.items():
        path = f"{prefix}{JOIN}{key}" if prefix else str(key)
        if isinstance(item, Mapping) and item:
            yield from flat(item, path)
        else:
            yield path, item


def fields(value: Mapping[str, Any], memory_id: str = "") -> list[tuple[str, Markup]]:
    """``value`` as ``(key, value)`` rows, escaped; with ``memory_id``, the entry ids a task's
    result names (``entry_ids · added``) link to their entries."""
    rows = []
    for path, item in flat(value):
        linked = memory_id and path.split(JOIN)[0] in ENTRY_KEYS and isinstance(item, list)
        if linked and item and all(isinstance(x, int) for x in item):
            base = f"/memories/{escape(memory_id)}/entries/"
            shown = Markup(", ").join(Markup(f'<a href="{base}{x}">#{x}</a>') for x in item)
        else:
            shown = escape(text(item))
        rows.append((path, Markup(shown)))
    return rows


def changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[Change]:
    """An event's before and after as one row per field: the fields of ``before`` first, in
    its order, then those only ``after`` has."""
    old, new = dict(flat(before)), dict(flat(after))
    keys = list(old) + [k for k in new if k not in old]
    return [
        Change(
            key,
            text(old[key]) if key in old else None,
            text(new[key]) if key in new else None,
        )
        for key in keys
    ]


__all__ = ["Change", "changes", "fields", "text"]

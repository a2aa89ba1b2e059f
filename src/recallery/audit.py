"""Content-free renderings of field values for audit events' before/after.

An audit event never holds entry content (erasure must leave nothing in the log), so long
text is reduced to its length and enums and times to their plain forms."""

from __future__ import annotations

import enum
from datetime import datetime

#: Text longer than this is recorded as its length only.
TEXT_LIMIT = 64


def summary(value: object) -> object:
    """A small, JSON-ready, content-free rendering of a field value."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple):
        return [summary(x) for x in value]
    if isinstance(value, str) and len(value) > TEXT_LIMIT:
        return f"<{len(value)} characters>"
    return value


__all__ = ["summary"]

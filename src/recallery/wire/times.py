"""Times on the wire: RAGFlow's ``YYYY-MM-DD HH:MM:SS`` and milliseconds, and full ISO 8601
for recallery's own fields."""

from __future__ import annotations

from datetime import UTC, datetime

TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


def stamp(value: datetime | None) -> str | None:
    """RAGFlow's ``YYYY-MM-DD HH:MM:SS`` (UTC), or None."""
    return None if value is None else value.astimezone(UTC).strftime(TIME_FORMAT)


def iso(value: datetime | None) -> str | None:
    """Full-precision ISO 8601 (for recallery's own time fields, usable as ``as_of``)."""
    return None if value is None else value.astimezone(UTC).isoformat()


def millis(value: datetime | None) -> int | None:
    return None if value is None else int(value.timestamp() * 1000)


def parse_time(value: object) -> datetime | None:
    """Inverse of :func:`stamp`, :func:`iso` and :func:`millis`."""
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return datetime.fromtimestamp(value / 1000, UTC)
    text = str(value)
    parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def required_time(value: object) -> datetime:
    """:func:`parse_time` for a field that always holds a time."""
    parsed = parse_time(value)
    if parsed is None:
        raise ValueError("a time is required")
    return parsed

"""Curation: the typed requests and results of bulk changes, the review queue and the counts of
entries over time, and their JSON shapes both ways (the REST API writes them, the SDK reads
them). Pure: the operations themselves are :mod:`recallery.services.curation`'s.

A bulk change selects entries of one memory by id, or raw turns by a :class:`MessageFilter`
(the filters of the Messages page), and disables, enables, forgets, restores, confirms,
rejects or erases each through the same lifecycle rules and audit events as one at a time.
A dry run (the default) changes nothing and says exactly what applying would change.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from recallery.errors import InvalidInput
from recallery.models import Entry, EntryType
from recallery.requests import MessageFilter, message_filter_fields
from recallery.wire import entry_dict, entry_from_dict, iso, required_time
from recallery.wire.envelope import Json


class BulkAction(enum.StrEnum):
    """What a bulk change does to each selected entry (as the single operation would)."""

    DISABLE = "disable"
    ENABLE = "enable"
    FORGET = "forget"
    RESTORE = "restore"
    CONFIRM = "confirm"
    REJECT = "reject"
    ERASE = "erase"


@dataclass(frozen=True)
class BulkResult:
    """What a bulk change selected (``ids``, ``selected`` of them) and what it changes:
    ``count`` entries, extracts and versions included, listed in ``changed`` (in a dry run,
    what applying would change). Entries already in the wanted state are not counted.
    ``token`` names this selection and change set: applying with it changes exactly these
    entries, or nothing (the selection changed since: a conflict). A key without ``read``
    gets the counts and the token, not the ids of what it selected by filter or cascade."""

    action: BulkAction
    dry_run: bool
    count: int
    ids: tuple[int, ...]
    changed: tuple[int, ...] = ()
    selected: int = 0
    token: str = ""


@dataclass(frozen=True)
class ReviewItem:
    """An extracted entry waiting for a verdict, and the raw turn it came from."""

    entry: Entry
    source: Entry | None


@dataclass(frozen=True)
class ReviewPage:
    items: tuple[ReviewItem, ...]
    total: int


@dataclass(frozen=True)
class FactPage:
    """A page of current extracted entries (facts), newest first by valid time, and how many
    pass the filters."""

    items: tuple[Entry, ...]
    total: int


class Bucket(enum.StrEnum):
    """The width of one bar of a timeline, aligned to UTC (weeks start on Monday)."""

    HOUR = "hour"
    DAY = "day"
    WEEK = "week"

    @property
    def width(self) -> timedelta:
        return {"hour": timedelta(hours=1), "day": timedelta(days=1)}.get(
            self.value, timedelta(days=7)
        )


@dataclass(frozen=True)
class Timeline:
    """Entries a memory holds by the bucket in which they were recorded, per type: one count
    per bucket in ``counts[type]``, the buckets starting at ``starts`` (oldest first)."""

    bucket: Bucket
    starts: tuple[datetime, ...]
    counts: Mapping[EntryType, tuple[int, ...]]

    @property
    def totals(self) -> tuple[int, ...]:
        """Entries of every type per bucket."""
        return tuple(sum(c[i] for c in self.counts.values()) for i in range(len(self.starts)))


MAX_BUCKETS = 366


def bucket_starts(now: datetime, bucket: Bucket, count: int) -> tuple[datetime, ...]:
    """The starts of the ``count`` buckets ending with the one that holds ``now``."""
    at = now.astimezone(UTC)
    if bucket is Bucket.HOUR:
        last = at.replace(minute=0, second=0, microsecond=0)
    else:
        last = at.replace(hour=0, minute=0, second=0, microsecond=0)
        if bucket is Bucket.WEEK:
            last -= timedelta(days=last.weekday())
    return tuple(last - bucket.width * (count - 1 - i) for i in range(count))


# --- JSON shapes ----------------------------------------------------------------------------


E = TypeVar("E", bound=enum.StrEnum)


def _choice(kind: type[E], value: object, field: str) -> E:
    try:
        return kind(str(value))
    except ValueError:
        names = ", ".join(f"'{k.value}'" for k in kind)
        raise InvalidInput(field, f"{field} must be one of {names}, got {value!r}.") from None


def bulk_action(value: object) -> BulkAction:
    return _choice(BulkAction, value, "action")


def bucket(value: object) -> Bucket:
    return _choice(Bucket, value, "bucket")


def message_filter_dict(f: MessageFilter) -> Json:
    """A filter in the Messages list's parameter names (what was not set is left out)."""
    out: dict[str, Any] = {}
    for spec in message_filter_fields():
        value = getattr(f, spec.name)
        if isinstance(value, frozenset):
            value = sorted(str(x) for x in value)
        if value is not None:
            out[spec.metadata["wire"]] = value
    return out


def message_filter_from_dict(d: Mapping[str, Any]) -> MessageFilter:
    """A filter from :func:`message_filter_dict`'s shape, as sent: the service that uses it
    checks each value, naming it ``filter.<name>``."""
    if not isinstance(d, Mapping):
        raise InvalidInput("filter", "filter must be an object of Messages filters.")
    return MessageFilter.sent(d, "filter.")


def bulk_result_dict(r: BulkResult) -> Json:
    return {
        "action": r.action.value,
        "dry_run": r.dry_run,
        "count": r.count,
        "selected": r.selected,
        "ids": list(r.ids),
        "changed": list(r.changed),
        "token": r.token,
    }


def bulk_result_from_dict(d: Mapping[str, Any]) -> BulkResult:
    return BulkResult(
        action=BulkAction(d["action"]),
        dry_run=bool(d["dry_run"]),
        count=int(d["count"]),
        ids=tuple(int(i) for i in d["ids"]),
        changed=tuple(int(i) for i in d.get("changed", ())),
        selected=int(d.get("selected", len(d["ids"]))),
        token=str(d.get("token", "")),
    )


def review_page_dict(p: ReviewPage) -> Json:
    items = [
        {"entry": entry_dict(i.entry), "source": None if i.source is None else entry_dict(i.source)}
        for i in p.items
    ]
    return {"items": items, "total_count": p.total}


def review_page_from_dict(d: Mapping[str, Any]) -> ReviewPage:
    items = tuple(
        ReviewItem(
            entry_from_dict(i["entry"]),
            None if i.get("source") is None else entry_from_dict(i["source"]),
        )
        for i in d["items"]
    )
    return ReviewPage(items, int(d["total_count"]))


def timeline_dict(t: Timeline) -> Json:
    return {
        "bucket": t.bucket.value,
        "starts": [iso(s) for s in t.starts],
        "counts": {k.value: list(c) for k, c in t.counts.items()},
    }


def timeline_from_dict(d: Mapping[str, Any]) -> Timeline:
    return Timeline(
        bucket=Bucket(d["bucket"]),
        starts=tuple(required_time(s) for s in d["starts"]),
        counts={EntryType(k): tuple(int(x) for x in c) for k, c in d["counts"].items()},
    )


__all__ = [
    "MAX_BUCKETS",
    "Bucket",
    "BulkAction",
    "BulkResult",
    "FactPage",
    "MessageFilter",
    "ReviewItem",
    "ReviewPage",
    "Timeline",
    "bucket",
    "bucket_starts",
    "bulk_action",
    "bulk_result_dict",
    "bulk_result_from_dict",
    "message_filter_dict",
    "message_filter_from_dict",
    "review_page_dict",
    "review_page_from_dict",
    "timeline_dict",
    "timeline_from_dict",
]

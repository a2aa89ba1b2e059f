"""Curation's requests and results: bulk changes (the action, the receipt of a dry run or of
applying it), the review queue, a page of facts and the counts of entries over time. The
operations are :mod:`recallery.services.curation`'s; the JSON shapes
:mod:`recallery.wire.curation`'s.

The Facts listing's and the review queue's filters are declared once, in :class:`FactFilter`
and :class:`ReviewFilter`, as the Messages filters are: the REST query, the SDK's keywords and
the OpenAPI document come from their fields.

A bulk change selects entries of one memory by id, or raw turns by a
:class:`~recallery.requests.MessageFilter` (the filters of the Messages page), and disables,
enables, forgets, restores, confirms, rejects or erases each through the same lifecycle rules
and audit events as one at a time. A dry run (the default) changes nothing and says exactly
what applying would change.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import Field, dataclass, field, fields
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from recallery.errors import InvalidInput
from recallery.models import Entry, EntryType, Trust
from recallery.requests.messages import said


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
class ReviewFilter:
    """Which waiting facts the review queue lists. ``None`` leaves a field unfiltered. Each
    field is declared once here, with its wire name and SDK keyword
    (:func:`review_filter_fields`); values are checked once, by the curation service."""

    user_id: str | None = said("user_id", "user_id", "text", "Only this user's entries (exact).")
    types: frozenset[EntryType] | None = said(
        "message_type",
        "types",
        "fact_types",
        "Only entries of these extracted types (default: any).",
    )

    @classmethod
    def sent(cls, values: Mapping[str, Any], field_prefix: str = "") -> ReviewFilter:
        """A filter of the values an adapter received, by wire name, as sent (a name no
        field has is refused, naming it)."""
        return cls(**_by_name(cls, values, field_prefix))


def review_filter_fields() -> tuple[Field[Any], ...]:
    """The declared fields of :class:`ReviewFilter` (``metadata``: wire, arg, kind, about)."""
    return fields(ReviewFilter)


def _by_name(cls: type, values: Mapping[str, Any], field_prefix: str) -> dict[str, Any]:
    """The values sent by wire name, keyed by ``cls``'s field names (None left out)."""
    by_wire = {spec.metadata["wire"]: spec.name for spec in fields(cls)}
    unknown = sorted(set(values) - set(by_wire))
    if unknown:
        name = field_prefix + unknown[0]
        raise InvalidInput(name, f"Unknown filter field '{name}'.")
    return {by_wire[k]: v for k, v in values.items() if v is not None}


@dataclass(frozen=True)
class FactCounts:
    """What became of the facts a Facts page's filters select, in the outcomes a turn's row
    on the Messages page counts: ``current`` now, ``repeated`` (times a turn still held said
    one again: no new row, its evidence grew), ``replaced`` since (versions a later fact, a
    correction or a merge retired), and ``erased`` or ``evicted`` since (tombstones; they keep
    only their type, so these are None when a filter other than the type is given)."""

    current: int = 0
    repeated: int = 0
    replaced: int = 0
    erased: int | None = 0
    evicted: int | None = 0


@dataclass(frozen=True)
class FactFilter:
    """Which current facts (extracted entries) of a memory the Facts listing selects. ``None``
    leaves a field unfiltered. Each field is declared once here, with its wire name and SDK
    keyword (:func:`fact_filter_fields`); values are checked once, by the curation service
    (an adapter builds one with :meth:`sent`)."""

    types: frozenset[EntryType] | None = said(
        "message_type", "types", "fact_types", "facts of these extracted types"
    )
    trust: frozenset[Trust] | None = said("trust", "trust", "trust", "facts in these trust states")
    status: bool | None = said(
        "status", "status", "flag", "enabled (true) or disabled (false) facts"
    )
    forgotten: bool | None = said(
        "forgotten", "forgotten", "flag", "forgotten (true) or not forgotten (false) facts"
    )
    user_id: str | None = said("user_id", "user_id", "text", "facts of this user (exact)")
    text: str | None = said("text", "text", "text", "facts whose text contains this, any case")

    @classmethod
    def sent(cls, values: Mapping[str, Any], field_prefix: str = "") -> FactFilter:
        """A filter of the values an adapter received, by wire name, as sent: the service
        checks each. A name no field has is refused (``field_prefix`` + the name)."""
        return cls(**_by_name(cls, values, field_prefix))


def fact_filter_fields() -> tuple[Field[Any], ...]:
    """The declared fields of :class:`FactFilter` (``metadata``: wire, arg, kind, about)."""
    return fields(FactFilter)


@dataclass(frozen=True)
class FactPage:
    """A page of current extracted entries (facts), newest first by valid time, how many
    pass the filters, and what became of them (read with the page)."""

    items: tuple[Entry, ...]
    total: int
    counts: FactCounts = field(default_factory=FactCounts)


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


class TimelineClock(enum.StrEnum):
    """Which time a timeline counts entries by: when they were recorded, or when they hold
    (``valid_at``: the conversation time of a turn sent with one)."""

    RECORDED = "recorded"
    VALID = "valid"


@dataclass(frozen=True)
class Timeline:
    """Entries a memory holds by the bucket in which they were recorded, per type: one count
    per bucket in ``counts[type]``, the buckets starting at ``starts`` (oldest first)."""

    bucket: Bucket
    starts: tuple[datetime, ...]
    counts: Mapping[EntryType, tuple[int, ...]]
    clock: TimelineClock = TimelineClock.RECORDED

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


def timeline_clock(value: object) -> TimelineClock:
    return _choice(TimelineClock, value, "clock")


__all__ = [
    "MAX_BUCKETS",
    "Bucket",
    "BulkAction",
    "BulkResult",
    "FactFilter",
    "FactPage",
    "ReviewFilter",
    "ReviewItem",
    "ReviewPage",
    "Timeline",
    "TimelineClock",
    "bucket",
    "bucket_starts",
    "bulk_action",
    "fact_filter_fields",
    "review_filter_fields",
    "timeline_clock",
]

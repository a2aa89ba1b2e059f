"""The JSON shapes of curation, both ways: a Messages filter in a bulk body, a bulk change's
receipt, a page of the review queue and a timeline (the types are
:mod:`recallery.requests.curation`'s)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recallery.errors import InvalidInput
from recallery.models import EntryType
from recallery.requests import (
    Bucket,
    BulkAction,
    BulkResult,
    FactPage,
    MessageFilter,
    ReviewItem,
    ReviewPage,
    Timeline,
    TimelineClock,
    message_filter_fields,
)
from recallery.requests.curation import FactCounts
from recallery.wire.entries import entry_dict, entry_from_dict
from recallery.wire.envelope import Json
from recallery.wire.times import iso, required_time


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


def fact_page_dict(p: FactPage) -> Json:
    """A page of facts, how many the filters select, and what became of them (``erased``
    and ``evicted`` are null when a filter other than the type was given)."""
    c = p.counts
    counts: dict[str, int | None] = {"current": c.current, "repeated": c.repeated}
    counts["replaced"] = c.replaced
    counts |= {"erased": c.erased, "evicted": c.evicted}
    return {"items": [entry_dict(e) for e in p.items], "total_count": p.total, "counts": counts}


def fact_page_from_dict(d: Mapping[str, Any]) -> FactPage:
    c = d.get("counts") or {}

    def maybe(name: str) -> int | None:
        return None if c.get(name) is None else int(c[name])

    counts = FactCounts(
        current=int(c.get("current", 0)),
        repeated=int(c.get("repeated", 0)),
        replaced=int(c.get("replaced", 0)),
        erased=maybe("erased"),
        evicted=maybe("evicted"),
    )
    items = tuple(entry_from_dict(e) for e in d["items"])
    return FactPage(items, int(d["total_count"]), counts)


def timeline_dict(t: Timeline) -> Json:
    return {
        "bucket": t.bucket.value,
        "clock": t.clock.value,
        "starts": [iso(s) for s in t.starts],
        "counts": {k.value: list(c) for k, c in t.counts.items()},
    }


def timeline_from_dict(d: Mapping[str, Any]) -> Timeline:
    return Timeline(
        bucket=Bucket(d["bucket"]),
        starts=tuple(required_time(s) for s in d["starts"]),
        counts={EntryType(k): tuple(int(x) for x in c) for k, c in d["counts"].items()},
        clock=TimelineClock(d.get("clock", TimelineClock.RECORDED.value)),
    )


__all__ = [
    "bulk_result_dict",
    "bulk_result_from_dict",
    "fact_page_dict",
    "fact_page_from_dict",
    "message_filter_dict",
    "message_filter_from_dict",
    "review_page_dict",
    "review_page_from_dict",
    "timeline_dict",
    "timeline_from_dict",
]

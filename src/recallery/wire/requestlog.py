"""The request log on the wire, both ways: a page of logged requests (``requests``,
``total_count``) and an entry's access history, times in ISO 8601."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recallery.models import Page
from recallery.requests.requestlog import EntryReads, KeyReads, LoggedRequest
from recallery.wire.times import iso, parse_time, required_time


def request_dict(r: LoggedRequest) -> dict[str, Any]:
    return {
        "id": r.id,
        "at": iso(r.at),
        "channel": r.channel,
        "route": r.route,
        "status": r.status,
        "latency_ms": r.latency_ms,
        "key_id": r.key_id,
        "user_id": r.user_id,
        "memory_ids": list(r.memory_ids),
        "entry_ids": list(r.entry_ids),
        "query": r.query,
    }


def request_from_dict(d: Mapping[str, Any]) -> LoggedRequest:
    return LoggedRequest(
        id=str(d["id"]),
        at=required_time(d["at"]),
        channel=str(d["channel"]),
        route=str(d["route"]),
        status=int(d["status"]),
        latency_ms=float(d["latency_ms"]),
        key_id=str(d.get("key_id", "")),
        user_id=str(d.get("user_id", "")),
        memory_ids=tuple(str(m) for m in d.get("memory_ids", ())),
        entry_ids=tuple(int(i) for i in d.get("entry_ids", ())),
        query=d.get("query"),
    )


def requests_page_dict(page: Page[LoggedRequest]) -> dict[str, Any]:
    return {"requests": [request_dict(r) for r in page.items], "total_count": page.total}


def requests_page_from_dict(d: Mapping[str, Any]) -> Page[LoggedRequest]:
    return Page(tuple(request_from_dict(r) for r in d["requests"]), int(d["total_count"]))


def entry_reads_dict(e: EntryReads) -> dict[str, Any]:
    return {
        "message_id": e.message_id,
        "count": e.count,
        "returned": e.returned,
        "named": e.named,
        "use_count": e.use_count,
        "last_at": iso(e.last_at),
        "by_key": [
            {"key_id": k.key_id, "user_id": k.user_id, "count": k.count, "last_at": iso(k.last_at)}
            for k in e.by_key
        ],
    }


def entry_reads_from_dict(d: Mapping[str, Any]) -> EntryReads:
    keys = tuple(
        KeyReads(str(k["key_id"]), str(k["user_id"]), int(k["count"]), required_time(k["last_at"]))
        for k in d["by_key"]
    )
    return EntryReads(
        int(d["message_id"]),
        int(d["returned"]),
        int(d["named"]),
        keys,
        int(d["use_count"]),
        parse_time(d.get("last_at")),
    )


__all__ = [
    "entry_reads_dict",
    "entry_reads_from_dict",
    "request_dict",
    "request_from_dict",
    "requests_page_dict",
    "requests_page_from_dict",
]

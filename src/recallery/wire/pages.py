"""The wrappers around entities: pages (``memory_list``/``total_count``, a memory's message
list, jobs, audit events), lists, and the small results of writes (``changed``, evidence, a new
key, team members). Each is a pair: ``*_dict`` for the server, ``*_from_dict`` for the SDK."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from recallery.models import ApiKey, AuditEvent, Entry, Hit, Job, Memory, Page, User
from recallery.requests import MessagePage
from recallery.wire.accounts import (
    audit_dict,
    audit_from_dict,
    key_dict,
    key_from_dict,
    user_dict,
    user_from_dict,
)
from recallery.wire.entries import entry_dict, entry_from_dict, hit_dict, hit_from_dict
from recallery.wire.envelope import Json
from recallery.wire.jobs import job_dict, job_from_dict
from recallery.wire.memories import MemorySummary, memory_item_dict, memory_item_from_dict

# --- lists ----------------------------------------------------------------------------------


def entries_dict(entries: Iterable[Entry]) -> list[Json]:
    return [entry_dict(e) for e in entries]


def entries_from_dict(data: Iterable[Mapping[str, Any]]) -> list[Entry]:
    return [entry_from_dict(d) for d in data]


def hits_dict(hits: Iterable[Hit]) -> list[Json]:
    return [hit_dict(h) for h in hits]


def hits_from_dict(data: Iterable[Mapping[str, Any]]) -> list[Hit]:
    return [hit_from_dict(d) for d in data]


def users_dict(users: Iterable[User]) -> list[Json]:
    return [user_dict(u) for u in users]


def users_from_dict(data: Iterable[Mapping[str, Any]]) -> list[User]:
    return [user_from_dict(d) for d in data]


def keys_dict(keys: Iterable[ApiKey]) -> list[Json]:
    return [key_dict(k) for k in keys]


def keys_from_dict(data: Iterable[Mapping[str, Any]]) -> list[ApiKey]:
    return [key_from_dict(d) for d in data]


# --- pages ----------------------------------------------------------------------------------


def memory_page_dict(items: Iterable[Memory], total: int, owner_names: Mapping[str, str]) -> Json:
    """RAGFlow's memory list: summaries with their owner's name, and the total."""
    listed = [memory_item_dict(m, owner_names.get(m.tenant_id)) for m in items]
    return {"memory_list": listed, "total_count": total}


def memory_page_from_dict(d: Mapping[str, Any]) -> Page[MemorySummary]:
    items = tuple(memory_item_from_dict(m) for m in d["memory_list"])
    return Page(items, int(d["total_count"]))


def agent_name(e: Entry) -> str:
    """RAGFlow shows the agent's canvas title; recallery has no canvases, so the agent id."""
    return e.agent_id or "Unknown"


def message_row_dict(raw: Entry, extracted: Sequence[Entry], job: Job | None) -> Json:
    """One row of a memory's message list: a raw turn, its extracts and its extraction task."""
    return {
        **entry_dict(raw),
        "agent_name": agent_name(raw),
        "extract": [{**entry_dict(x), "agent_name": agent_name(x)} for x in extracted],
        "task": {} if job is None else job_dict(job),
    }


def message_page_dict(page: MessagePage) -> Json:
    """A memory's message list (RAGFlow's list-messages answer)."""
    rows = [
        message_row_dict(e, page.extracted.get(e.message_id, ()), page.jobs.get(e.message_id))
        for e in page.items
    ]
    listed = {"message_list": rows, "total_count": page.total}
    return {"messages": listed, "storage_type": "table"}


def message_page_from_dict(d: Mapping[str, Any]) -> MessagePage:
    rows = d["messages"]["message_list"]
    items = tuple(entry_from_dict(r) for r in rows)
    extracted = {
        int(r["message_id"]): tuple(entries_from_dict(r["extract"])) for r in rows if r["extract"]
    }
    jobs = {int(r["message_id"]): job_from_dict(r["task"]) for r in rows if r["task"]}
    return MessagePage(items, int(d["messages"]["total_count"]), extracted, jobs)


def job_page_dict(page: Page[Job]) -> Json:
    return {"jobs": [job_dict(j) for j in page.items], "total_count": page.total}


def job_page_from_dict(d: Mapping[str, Any]) -> Page[Job]:
    return Page(tuple(job_from_dict(j) for j in d["jobs"]), int(d["total_count"]))


def audit_page_dict(page: Page[AuditEvent]) -> Json:
    return {"events": [audit_dict(a) for a in page.items], "total_count": page.total}


def audit_page_from_dict(d: Mapping[str, Any]) -> Page[AuditEvent]:
    return Page(tuple(audit_from_dict(a) for a in d["events"]), int(d["total_count"]))


# --- results of writes ----------------------------------------------------------------------


def changed_dict(message_ids: Iterable[int]) -> Json:
    """The entries a status change, forget or restore changed."""
    return {"changed": list(message_ids)}


def changed_from_dict(d: Mapping[str, Any]) -> list[int]:
    return [int(i) for i in d["changed"]]


def evidence_dict(message_id: int, source_ids: Iterable[int]) -> Json:
    """The raw turns that support an entry."""
    return {"message_id": message_id, "source_ids": list(source_ids)}


def evidence_from_dict(d: Mapping[str, Any]) -> list[int]:
    return [int(i) for i in d["source_ids"]]


def new_key_dict(record: ApiKey, key: str) -> Json:
    """A new API key: its record and the key itself (shown only this once)."""
    return {**key_dict(record), "key": key}


def new_key_from_dict(d: Mapping[str, Any]) -> tuple[ApiKey, str]:
    return key_from_dict(d), str(d["key"])


def members_dict(tenant_id: str, members: Iterable[str]) -> Json:
    return {"tenant_id": tenant_id, "members": list(members)}


def members_from_dict(d: Mapping[str, Any]) -> list[str]:
    return [str(m) for m in d["members"]]

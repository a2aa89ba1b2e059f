"""The SDK's agent operations: entries stated directly, and a turn's task status."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from recallery import wire
from recallery.client.call import Call, time_text
from recallery.models import Job
from recallery.requests import AddedEntries, EntryInput
from recallery.wire.statements import added_from_dict


def _entry_body(e: EntryInput | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(e, Mapping):
        return dict(e)
    return {
        "content": e.content,
        "message_type": str(e.message_type),
        "valid_at": time_text(e.valid_at),
        "invalid_at": time_text(e.invalid_at),
    }


def add_entries(
    memory_id: str,
    entries: Sequence[EntryInput | Mapping[str, Any]],
    *,
    user_id: str = "",
    agent_id: str = "",
    session_id: str = "",
    source_id: int | None = None,
) -> Call[AddedEntries]:
    """State typed entries directly; each is reconciled (added, a duplicate, superseding an
    entry, or suppressed by a rejected one) and the result says which."""
    body = {
        "entries": [_entry_body(e) for e in entries],
        "user_id": user_id,
        "agent_id": agent_id,
        "session_id": session_id,
        "source_id": source_id,
    }
    return Call("POST", f"/memories/{memory_id}/entries", added_from_dict, json=body)


def _job_or_none(data: Any) -> Job | None:
    return None if data is None else wire.job_from_dict(data)


def task_status(memory_id: str, message_id: int) -> Call[Job | None]:
    """The extraction job of a raw turn (None when the memory extracts nothing)."""
    return Call("GET", f"/messages/{memory_id}:{message_id}/task", _job_or_none)

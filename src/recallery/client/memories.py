"""The SDK's memory operations: configuration, the message list, jobs, export and import."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from recallery import wire
from recallery.client.call import Call, carried, none
from recallery.errors import RecalleryWarning
from recallery.models import Job, Memory, Page
from recallery.requests import ImportReport, MessageFilter, MessagePage, message_filter_fields
from recallery.requests.either import message_filter
from recallery.requests.runs import ChatCheck, Retried
from recallery.wire import MemorySummary, transfer


def create_memory(
    name: str, memory_type: Sequence[str], embd_id: str, llm_id: str, **options: object
) -> Call[Memory]:
    """Create a memory; ``options`` are any of the configuration fields (permissions...)."""
    body = {"name": name, "memory_type": list(memory_type), "embd_id": embd_id, "llm_id": llm_id}
    return Call("POST", "/memories", _configured, json={**body, **options})


def _configured(data: Mapping[str, Any]) -> Memory:
    """A memory the server created or changed; what keeps it from working as configured (the
    answer's ``warnings``) is raised as a :class:`RecalleryWarning`."""
    for message in data.get("warnings") or ():
        warnings.warn(message, RecalleryWarning, stacklevel=5)
    return wire.memory_from_dict(data)


def list_memories(
    *,
    keywords: str | None = None,
    memory_types: Sequence[str] | None = None,
    storage_type: str | None = None,
    owner_ids: Sequence[str] | None = None,
    ids: Sequence[str] | None = None,
    page: int = 1,
    page_size: int = 30,
) -> Call[Page[MemorySummary]]:
    params = {
        "keywords": keywords,
        "memory_type": None if memory_types is None else ",".join(memory_types),
        "storage_type": storage_type,
        "owner_ids": None if owner_ids is None else ",".join(owner_ids),
        "ids": None if ids is None else ",".join(ids),
        "page": page,
        "page_size": page_size,
    }
    return Call("GET", "/memories", wire.memory_page_from_dict, params=params)


def get_memory(memory_id: str) -> Call[Memory]:
    return Call("GET", f"/memories/{memory_id}/config", wire.memory_from_dict)


def update_memory(
    memory_id: str, changes: Mapping[str, object], *, evict: bool = False
) -> Call[Memory]:
    """Change a memory's configuration; a ``memory_size`` below what it holds is refused
    unless ``evict`` asks the forgetting policy to make room at once."""
    params = {"evict": "true"} if evict else None
    return Call("PUT", f"/memories/{memory_id}", _configured, params=params, json=dict(changes))


def delete_memory(memory_id: str) -> Call[None]:
    return Call("DELETE", f"/memories/{memory_id}", none)


def list_messages(
    memory_id: str,
    where: MessageFilter | None = None,
    *,
    agent_ids: Sequence[str] | None = None,
    keywords: str | None = None,
    trust: str | Iterable[str] | None = None,
    user_id: str | None = None,
    session_id: str | None = None,
    types: str | Iterable[str] | None = None,
    status: bool | None = None,
    forgotten: bool | None = None,
    origin: str | Iterable[str] | None = None,
    recorded_since: datetime | str | None = None,
    recorded_before: datetime | str | None = None,
    valid_since: datetime | str | None = None,
    valid_before: datetime | str | None = None,
    page: int = 1,
    page_size: int = 50,
) -> Call[MessagePage]:
    """Raw turns newest first, each with its extracted entries and its extraction job.
    Each filter is a field of :class:`recallery.MessageFilter` (by its SDK keyword), which
    says what it selects; None filters nothing. A :class:`~recallery.MessageFilter` as
    ``where`` says it all (then give no filter keyword)."""
    given = locals()
    args = {spec.metadata["arg"]: given[spec.metadata["arg"]] for spec in message_filter_fields()}
    chosen = message_filter(where, args)
    params: dict[str, Any] = {"page": page, "page_size": page_size}
    for spec in message_filter_fields():
        params[spec.metadata["wire"]] = carried(getattr(chosen, spec.name))
    return Call("GET", f"/memories/{memory_id}", wire.message_page_from_dict, params=params)


def jobs(
    memory_id: str, *, state: str | None = None, page: int = 1, page_size: int = 30
) -> Call[Page[Job]]:
    params = {"state": state, "page": page, "page_size": page_size}
    return Call("GET", f"/memories/{memory_id}/jobs", wire.job_page_from_dict, params=params)


def retry_extraction(memory_id: str, message_id: int) -> Call[Job]:
    """Queue one turn's extraction again (its last job must have finished); the new job."""
    path = f"/memories/{memory_id}/messages/{message_id}/extract"
    return Call("POST", path, wire.job_from_dict)


def retry_failed_extraction(memory_id: str) -> Call[Retried]:
    """Queue again every turn whose last extraction failed, was unparseable or invalid."""
    return Call("POST", f"/memories/{memory_id}/jobs/retry", wire.retried_from_dict)


def test_chat_model(memory_id: str) -> Call[ChatCheck]:
    """One tiny request through the memory's chat model: ok, or the model's error."""
    return Call("POST", f"/memories/{memory_id}/chat-test", wire.chat_check_from_dict)


def export_memory(memory_id: str) -> Call[list[dict[str, Any]]]:
    """The memory as JSONL records (see :mod:`recallery.wire.transfer`)."""
    return Call("GET", f"/memories/{memory_id}/export", transfer.parse_jsonl, raw=True)


def import_memory(
    memory_id: str | None, records: str | Iterable[Mapping[str, Any]]
) -> Call[ImportReport]:
    """Import JSONL text or records into a memory, or into a new one when ``memory_id`` is
    None (the records then start with an export's header)."""
    text = records if isinstance(records, str) else transfer.to_jsonl(records)
    path = "/memories/import" if memory_id is None else f"/memories/{memory_id}/import"
    headers = {"Content-Type": "application/x-ndjson"}
    return Call("POST", path, transfer.report_from_dict, content=text, headers=headers)

"""The SDK's message operations: turns, search and context, and the life of one entry."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np
from numpy.typing import NDArray

from recallery import wire
from recallery.client.call import Call, carried, time_text
from recallery.models import Entry, EraseReceipt, Hit
from recallery.requests import (
    DEFAULT_KEYWORD_WEIGHT,
    DEFAULT_MAX_TOKENS,
    DEFAULT_SIMILARITY_THRESHOLD,
    DEFAULT_TOP_N,
    Context,
    SearchRequest,
    search_fields,
)
from recallery.requests.either import search_values


def add_turn(
    memory_ids: Sequence[str],
    *,
    user_input: str,
    agent_response: str,
    agent_id: str = "",
    session_id: str = "",
    user_id: str | None = None,
    conversation_time: datetime | str | None = None,
) -> Call[list[Entry]]:
    """Store a conversation turn in each memory; returns the raw entries written."""
    body = {
        "memory_id": list(memory_ids),
        "agent_id": agent_id,
        "session_id": session_id,
        "user_input": user_input,
        "agent_response": agent_response,
        "user_id": user_id,
        "conversation_time": time_text(conversation_time),
    }
    return Call(
        "POST",
        "/messages",
        wire.entries_from_dict,
        json={k: v for k, v in body.items() if v is not None},
    )


def _search_params(given: Mapping[str, Any], *, body: bool) -> dict[str, Any]:
    """The search's arguments by their declared wire names (:class:`SearchRequest`); what
    is None is not sent (the server's default applies)."""
    sent: dict[str, Any] = {}
    for spec in search_fields():
        value = given.get(spec.name)
        if value is not None:
            # lists are one comma-separated text in a query string; memory_id repeats there
            joined = not body and spec.metadata["kind"] != "memories"
            sent[spec.metadata["wire"]] = carried(value, joined=joined)
    return sent


def _given(args: dict[str, Any]) -> dict[str, Any]:
    """A search's values by field name, from the arguments or the request given."""
    query, memory_ids = args.pop("query"), args.pop("memory_ids")
    return search_values(query, memory_ids, args)


def search(
    query: str | SearchRequest,
    memory_ids: Sequence[str] | None = None,
    *,
    top_n: int = DEFAULT_TOP_N,
    similarity_threshold: float = DEFAULT_SIMILARITY_THRESHOLD,
    keywords_similarity_weight: float = DEFAULT_KEYWORD_WEIGHT,
    user_id: str | None = None,
    agent_id: str | None = None,
    session_id: str | None = None,
    types: Iterable[str] | None = None,
    as_of: datetime | str | None = None,
    valid_on: datetime | str | None = None,
    fusion: str | None = None,
    neighbour_weight: float | None = None,
    neighbour_span: int | None = None,
    trust: str | Iterable[str] | None = None,
    context_weight: float | None = None,
    recency_weight: float | None = None,
    recency_plain: float | None = None,
    recency_band: float | None = None,
    context_length: int | None = None,
    supersession: float | None = None,
    origin: str | Iterable[str] | None = None,
    explain: bool | None = None,
) -> Call[list[Hit]]:
    """Hybrid search, best first. Every argument is a field of
    :class:`recallery.SearchRequest`, which says what each does; None leaves it to the
    server (its default or setting). A :class:`~recallery.SearchRequest` as the query
    carries every field (then give no other argument)."""
    params = _search_params(_given(locals()), body=False)
    return Call("GET", "/messages/search", wire.hits_from_dict, params=params)


def context(
    query: str | SearchRequest,
    memory_ids: Sequence[str] | None = None,
    *,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    top_n: int = DEFAULT_TOP_N,
    similarity_threshold: float = DEFAULT_SIMILARITY_THRESHOLD,
    keywords_similarity_weight: float = DEFAULT_KEYWORD_WEIGHT,
    user_id: str | None = None,
    agent_id: str | None = None,
    session_id: str | None = None,
    types: Iterable[str] | None = None,
    as_of: datetime | str | None = None,
    valid_on: datetime | str | None = None,
    fusion: str | None = None,
    neighbour_weight: float | None = None,
    neighbour_span: int | None = None,
    trust: str | Iterable[str] | None = None,
    context_weight: float | None = None,
    recency_weight: float | None = None,
    recency_plain: float | None = None,
    recency_band: float | None = None,
    context_length: int | None = None,
    supersession: float | None = None,
    origin: str | Iterable[str] | None = None,
    explain: bool | None = None,
) -> Call[Context]:
    """A token-bounded block of the best entries, fenced as data, for a prompt; the search
    arguments as in :func:`search`."""
    given = locals()
    budget = given.pop("max_tokens")
    body = {**_search_params(_given(given), body=True), "max_tokens": budget}
    return Call("POST", "/messages/context", wire.context_from_dict, json=body)


def recent(
    memory_ids: Sequence[str],
    *,
    agent_id: str | None = None,
    session_id: str | None = None,
    limit: int = 10,
) -> Call[list[Entry]]:
    params = {
        "memory_id": list(memory_ids),
        "agent_id": agent_id,
        "session_id": session_id,
        "limit": limit,
    }
    return Call("GET", "/messages", wire.entries_from_dict, params=params)


def _entry_path(memory_id: str, message_id: int) -> str:
    return f"/messages/{memory_id}:{message_id}"


def get_entry(memory_id: str, message_id: int) -> Call[tuple[Entry, NDArray[np.float32] | None]]:
    """An entry with its vector."""
    path = _entry_path(memory_id, message_id) + "/content"
    return Call("GET", path, wire.content_from_dict)


def set_status(memory_id: str, message_id: int, enabled: bool) -> Call[list[int]]:
    """Enable or disable an entry (and what was extracted from it); returns the ids changed."""
    path = _entry_path(memory_id, message_id)
    return Call("PUT", path, wire.changed_from_dict, json={"status": enabled})


def forget(memory_id: str, message_id: int) -> Call[list[int]]:
    return Call("DELETE", _entry_path(memory_id, message_id), wire.changed_from_dict, json={})


def restore(memory_id: str, message_id: int) -> Call[list[int]]:
    path = _entry_path(memory_id, message_id) + "/restore"
    return Call("POST", path, wire.changed_from_dict)


def review(memory_id: str, message_id: int, verdict: str, reason: str = "") -> Call[Entry]:
    """``verdict`` is ``confirmed`` or ``rejected``."""
    body = {"verdict": verdict, "reason": reason}
    path = _entry_path(memory_id, message_id) + "/review"
    return Call("POST", path, wire.entry_from_dict, json=body)


def correct(
    memory_id: str,
    message_id: int,
    content: str,
    *,
    reason: str = "",
    valid_at: datetime | str | None = None,
) -> Call[Entry]:
    """Write a corrected version; returns the new current entry."""
    body = {"content": content, "reason": reason, "valid_at": time_text(valid_at)}
    path = _entry_path(memory_id, message_id) + "/correct"
    return Call("POST", path, wire.entry_from_dict, json=body)


def reinstate(memory_id: str, message_id: int, reason: str) -> Call[Entry]:
    """Make a retired version current again (the version that replaced it is retired);
    returns the reinstated entry."""
    path = _entry_path(memory_id, message_id) + "/reinstate"
    return Call("POST", path, wire.entry_from_dict, json={"reason": reason})


def erase(memory_id: str, message_id: int, *, reason: str = "") -> Call[EraseReceipt]:
    path = _entry_path(memory_id, message_id) + "/erase"
    return Call("POST", path, wire.receipt_from_dict, json={"reason": reason})


def history(memory_id: str, message_id: int) -> Call[list[Entry]]:
    path = _entry_path(memory_id, message_id) + "/history"
    return Call("GET", path, wire.entries_from_dict)


def evidence(memory_id: str, message_id: int) -> Call[list[int]]:
    path = _entry_path(memory_id, message_id) + "/evidence"
    return Call("GET", path, wire.evidence_from_dict)

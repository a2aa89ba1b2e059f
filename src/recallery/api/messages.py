"""Message routes: RAGFlow's 1.7–1.12, then context, correction, review, restore, erasure,
history and evidence."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends

from recallery import validation as v
from recallery import wire
from recallery.api.deps import Actor, EngineDep
from recallery.errors import InvalidInput
from recallery.requests import DEFAULT_MAX_TOKENS
from recallery.web.edge import declared, params
from recallery.web.edge import schemas as S
from recallery.web.edge.bodies import (
    REQUIRED_BODY,
    AddMessage,
    Correct,
    Reason,
    RequiredReason,
    Review,
    SetStatus,
)

router = APIRouter(tags=["messages"])

MemoryIds = Annotated[
    list[str] | None, params.listing(S.MEMORY_ID, "Memories, repeated or comma-separated.")
]
MemoryId = params.MemoryId
MessageId = params.MessageId
#: A search needs a query and memories (the route still answers RAGFlow's message without).
SEARCH_NEEDS = {params.REQUIRED_QUERY: ["query", "memory_id"]}
ENTRY = "/messages/{memory_id}:{message_id}"
TOKEN_BUDGET = {"type": "integer", "minimum": 1, "maximum": 10**18 - 1}


@router.post(
    "/messages",
    summary="Add a conversation turn to memories (RAGFlow 1.7)",
    openapi_extra=REQUIRED_BODY,
)
def add_message(engine: EngineDep, actor: Actor, body: AddMessage | None = None) -> Any:
    fields = body or AddMessage()
    fields.require("memory_id", "agent_id", "session_id", "user_input", "agent_response")
    written = engine.add_turn(
        actor,
        params.ids(fields.memory_id, "memory_id"),
        user_input=fields.user_input,
        agent_response=fields.agent_response,
        user_id=fields.user_id or actor.user_id,
        agent_id=fields.agent_id,
        session_id=fields.session_id,
        conversation_time=fields.conversation_time,
    )
    answer = wire.envelope(wire.entries_dict(written), wire.ADD_MESSAGE_OK)
    # beside ``data`` (a list here): text a memory's embedder cannot read, as the SDK warns
    warnings = engine.written_warnings(written)
    return {**answer, "warnings": warnings} if warnings else answer


SearchParameters = Annotated[dict[str, Any], Depends(declared.search_parameters)]


@router.get(
    "/messages/search",
    summary="Hybrid keyword + vector search (RAGFlow 1.10), by type, time and trust too",
    openapi_extra=SEARCH_NEEDS,
)
def search(engine: EngineDep, actor: Actor, query: SearchParameters) -> Any:
    hits = engine.search(actor, declared.search_request(query))
    return wire.envelope(wire.hits_dict(hits))


@router.get(
    "/messages",
    summary="Most recent messages (RAGFlow 1.11)",
    openapi_extra={params.REQUIRED_QUERY: ["memory_id"]},
)
def recent(
    engine: EngineDep,
    actor: Actor,
    memory_id: MemoryIds = None,
    agent_id: params.Free = None,
    session_id: params.Free = None,
    limit: Annotated[str | None, params.query(S.LENIENT_SIZE, params.SIZE)] = None,
) -> Any:
    ids = params.id_list(memory_id, "memory_id")
    if not ids:
        raise InvalidInput("memory_id", "memory_ids is required.")
    found = engine.recent(
        actor,
        ids,
        agent_id=params.optional(agent_id),
        session_id=params.optional(session_id),
        limit=params.size(limit, 10, "limit"),
    )
    return wire.envelope(wire.entries_dict(found))


@router.get(
    "/messages/context",
    summary="A prompt-ready, token-bounded block of memories (search parameters, trust too)",
    openapi_extra=SEARCH_NEEDS,
)
def context_get(
    engine: EngineDep,
    actor: Actor,
    query: SearchParameters,
    max_tokens: Annotated[str | None, params.query(TOKEN_BUDGET)] = None,
) -> Any:
    found = engine.context(actor, declared.search_request(query), _max_tokens(max_tokens))
    return wire.envelope(wire.context_dict(found))


@router.post(
    "/messages/context",
    summary="The same, with a JSON body (trust too)",
    openapi_extra=REQUIRED_BODY,
)
def context_post(engine: EngineDep, actor: Actor, body: declared.ContextQuery | None = None) -> Any:
    sent = (body or declared.ContextQuery()).sent()
    budget = _max_tokens(sent.get("max_tokens"))
    found = engine.context(actor, declared.search_request(sent), budget)
    return wire.envelope(wire.context_dict(found))


@router.delete(ENTRY, summary="Forget a message (soft; RAGFlow 1.8)")
def forget(engine: EngineDep, actor: Actor, memory_id: MemoryId, message_id: MessageId) -> Any:
    changed = engine.forget(actor, params.path_memory_id(memory_id), message_id)
    return wire.envelope(wire.changed_dict(changed))


@router.put(ENTRY, summary="Enable or disable a message (RAGFlow 1.9)", openapi_extra=REQUIRED_BODY)
def set_status(
    engine: EngineDep,
    actor: Actor,
    memory_id: MemoryId,
    message_id: MessageId,
    body: SetStatus | None = None,
) -> Any:
    fields = body or SetStatus()
    fields.require("status")
    mid = params.path_memory_id(memory_id)
    changed = engine.set_status(actor, mid, message_id, fields.status)
    return wire.envelope(wire.changed_dict(changed))


@router.get(ENTRY + "/content", summary="A message with its vector (RAGFlow 1.12)")
def content(engine: EngineDep, actor: Actor, memory_id: MemoryId, message_id: MessageId) -> Any:
    entry, vector = engine.get_entry(actor, params.path_memory_id(memory_id), message_id)
    embed = None if vector is None else [float(x) for x in vector]
    return wire.envelope(wire.content_dict(entry, embed))


@router.post(
    ENTRY + "/correct",
    summary="Write a corrected version; the old one is retired",
    openapi_extra=REQUIRED_BODY,
)
def correct(
    engine: EngineDep,
    actor: Actor,
    memory_id: MemoryId,
    message_id: MessageId,
    body: Correct | None = None,
) -> Any:
    fields = body or Correct()
    fields.require("content")
    entry = engine.correct(
        actor,
        params.path_memory_id(memory_id),
        message_id,
        fields.content,
        reason=_reason(fields.reason),
        valid_at=fields.valid_at,
    )
    return wire.envelope(wire.entry_dict(entry))


@router.post(ENTRY + "/review", summary="Confirm or reject a message", openapi_extra=REQUIRED_BODY)
def review(
    engine: EngineDep,
    actor: Actor,
    memory_id: MemoryId,
    message_id: MessageId,
    body: Review | None = None,
) -> Any:
    fields = body or Review()
    fields.require("verdict")
    mid = params.path_memory_id(memory_id)
    entry = engine.review(actor, mid, message_id, fields.verdict, _reason(fields.reason))
    return wire.envelope(wire.entry_dict(entry))


@router.post(ENTRY + "/restore", summary="Undo forget")
def restore(engine: EngineDep, actor: Actor, memory_id: MemoryId, message_id: MessageId) -> Any:
    changed = engine.restore(actor, params.path_memory_id(memory_id), message_id)
    return wire.envelope(wire.changed_dict(changed))


@router.post(
    ENTRY + "/reinstate",
    summary="Make a retired version current again; the version that replaced it is retired",
    openapi_extra=REQUIRED_BODY,
)
def reinstate(
    engine: EngineDep,
    actor: Actor,
    memory_id: MemoryId,
    message_id: MessageId,
    body: RequiredReason | None = None,
) -> Any:
    reason = _reason((body or RequiredReason()).reason)
    entry = engine.reinstate(actor, params.path_memory_id(memory_id), message_id, reason)
    return wire.envelope(wire.entry_dict(entry))


@router.post(ENTRY + "/erase", summary="Hard-delete a message, its versions and its extracts")
def erase(
    engine: EngineDep,
    actor: Actor,
    memory_id: MemoryId,
    message_id: MessageId,
    body: Reason | None = None,
) -> Any:
    reason = _reason((body or Reason()).reason)
    receipt = engine.erase(actor, params.path_memory_id(memory_id), message_id, reason=reason)
    return wire.envelope(wire.receipt_dict(receipt))


@router.get(ENTRY + "/history", summary="Every version of a message, oldest first")
def history(engine: EngineDep, actor: Actor, memory_id: MemoryId, message_id: MessageId) -> Any:
    versions = engine.history(actor, params.path_memory_id(memory_id), message_id)
    return wire.envelope(wire.entries_dict(versions))


@router.get(ENTRY + "/evidence", summary="Raw turns that support a message")
def evidence(engine: EngineDep, actor: Actor, memory_id: MemoryId, message_id: MessageId) -> Any:
    sources = engine.evidence(actor, params.path_memory_id(memory_id), message_id)
    return wire.envelope(wire.evidence_dict(v.message_id(message_id), sources))


# --- helpers --------------------------------------------------------------------------------


def _reason(value: object) -> str:
    return "" if value is None else v.text(value, "reason", limit=v.MAX_ID_TEXT * 4)


def _max_tokens(value: object) -> int:
    """The token budget: an integer, or text of (at most 18) ASCII digits holding one."""
    if value is None:
        return DEFAULT_MAX_TOKENS
    number = params.whole(value)
    if isinstance(number, int) and not isinstance(number, bool):
        return number
    raise InvalidInput("max_tokens", "max_tokens must be a positive integer.")

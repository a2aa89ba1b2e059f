"""Memory routes: RAGFlow's 1.1–1.6, then jobs, export and import."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Query
from fastapi.responses import Response

from recallery import wire
from recallery.api.deps import Actor, EngineDep
from recallery.engine import Engine
from recallery.errors import InvalidInput
from recallery.models import Memory
from recallery.web.edge import declared, params
from recallery.web.edge import schemas as S
from recallery.web.edge.bodies import REQUIRED_BODY, MemoryFields, NewMemory
from recallery.wire import transfer

router = APIRouter(tags=["memories"])

Ids = Annotated[list[str] | None, params.listing({"type": "string"})]
Text = params.Free
MemoryTypes = Annotated[
    list[str] | None,
    params.listing(S.ENTRY_TYPE, "Memories with any of these types, repeated or comma-separated."),
]
MemoryId = params.MemoryId
Page = params.Page
Size = params.Size
#: RAGFlow passes these through on update; recallery resolves models by id and ignores them.
IGNORED_ON_UPDATE = ("tenant_llm_id", "tenant_embd_id")
REQUIRED_ON_CREATE = ("name", "memory_type", "embd_id", "llm_id")
EVICT = (
    "A `memory_size` below the bytes the memory holds is refused (code 101) unless this is "
    "true: then entries are evicted at once by the forgetting policy, each audited as "
    "`entry.evict`. Only the owner changes `memory_size` and `forgetting_policy`."
)


def _full(engine: Engine, memory: Memory) -> dict[str, Any]:
    """A memory's configuration, with ``warnings``: what keeps it from working as configured
    (a chat model whose provider has no endpoint here), so a caller sees it at once."""
    owner = engine.user_names([memory.tenant_id]).get(memory.tenant_id)
    return {**wire.memory_dict(memory, owner), "warnings": engine.memory_warnings(memory)}


@router.post("/memories", summary="Create a memory (RAGFlow 1.1)", openapi_extra=REQUIRED_BODY)
def create_memory(engine: EngineDep, actor: Actor, body: NewMemory | None = None) -> Any:
    fields = body or NewMemory()
    fields.require(*REQUIRED_ON_CREATE)
    sent = fields.sent()
    options = {k: val for k, val in sent.items() if k not in REQUIRED_ON_CREATE}
    for key in IGNORED_ON_UPDATE:
        options.pop(key, None)
    memory = engine.create_memory(
        actor,
        name=sent["name"],
        memory_type=sent["memory_type"],
        embd_id=sent["embd_id"],
        llm_id=sent["llm_id"],
        **options,
    )
    return wire.envelope(_full(engine, memory))


@router.put("/memories/{memory_id}", summary="Update a memory's configuration (RAGFlow 1.2)")
def update_memory(
    engine: EngineDep,
    actor: Actor,
    memory_id: MemoryId,
    body: MemoryFields | None = None,
    evict: Annotated[bool, Query(description=EVICT)] = False,
) -> Any:
    changes = (body or MemoryFields()).sent()
    for key in IGNORED_ON_UPDATE:
        changes.pop(key, None)
    mid = params.path_memory_id(memory_id)
    memory = engine.update_memory(actor, mid, changes, evict=evict)
    return wire.envelope(_full(engine, memory))


@router.delete("/memories/{memory_id}", summary="Delete a memory and its entries (RAGFlow 1.3)")
def delete_memory(engine: EngineDep, actor: Actor, memory_id: MemoryId) -> Any:
    engine.delete_memory(actor, params.path_memory_id(memory_id))
    return wire.envelope()


@router.get("/memories", summary="List memories the caller can see (RAGFlow 1.4)")
def list_memories(
    engine: EngineDep,
    actor: Actor,
    keywords: Text = None,
    memory_type: MemoryTypes = None,
    storage_type: Text = None,
    tenant_id: Ids = None,
    owner_ids: Ids = None,
    ids: Ids = None,
    page: Page = None,
    page_size: Size = None,
) -> Any:
    owners = params.id_list([*(tenant_id or ()), *(owner_ids or ())], "owner_ids")
    number = params.page(page)
    found = engine.list_memories(
        actor,
        keywords=params.optional(keywords),
        memory_types=params.id_list(memory_type, "memory_type") or None,
        storage_type=params.optional(storage_type),
        owner_ids=owners or None,
        ids=params.id_list(ids, "ids") or None,
        page=number,
        page_size=params.size(page_size, params.FALLBACK_SIZE),
    )
    # RAGFlow pages by update time, then shows the page newest-created first.
    items = sorted(found.items, key=_created, reverse=True)
    names = engine.user_names(m.tenant_id for m in items)
    return wire.envelope(wire.memory_page_dict(items, found.total, names))


def _created(m: Memory) -> float:
    return m.created_at.timestamp() if m.created_at else 0.0


@router.get("/memories/{memory_id}/config", summary="A memory's configuration (RAGFlow 1.5)")
def get_config(engine: EngineDep, actor: Actor, memory_id: MemoryId) -> Any:
    return wire.envelope(_full(engine, engine.get_memory(actor, params.path_memory_id(memory_id))))


@router.get(
    "/memories/{memory_id}",
    summary="Raw turns with extracts and tasks (RAGFlow 1.6), by trust too",
)
def list_messages(
    engine: EngineDep,
    actor: Actor,
    memory_id: MemoryId,
    filters: Annotated[dict[str, Any], Depends(declared.filter_parameters)],
    page: Page = None,
    page_size: Size = None,
) -> Any:
    found = engine.list_messages(
        actor,
        params.path_memory_id(memory_id),
        declared.message_filter(filters),
        page=params.page(page),
        page_size=params.size(page_size, 50),
    )
    return wire.envelope(wire.message_page_dict(found))


@router.get("/memories/{memory_id}/jobs", summary="Background jobs of a memory, newest first")
def list_jobs(
    engine: EngineDep,
    actor: Actor,
    memory_id: MemoryId,
    state: Annotated[str | None, params.query(S.JOB_STATE)] = None,
    page: Page = None,
    page_size: Size = None,
) -> Any:
    found = engine.jobs(
        actor,
        params.path_memory_id(memory_id),
        state=params.optional(state),
        page=params.page(page),
        page_size=params.size(page_size, params.FALLBACK_SIZE),
    )
    return wire.envelope(wire.job_page_dict(found))


@router.post(
    "/memories/{memory_id}/jobs/retry",
    summary="Queue again every turn whose last extraction failed, was unparseable or invalid",
)
def retry_failed_extraction(engine: EngineDep, actor: Actor, memory_id: MemoryId) -> Any:
    retried = engine.retry_failed_extraction(actor, params.path_memory_id(memory_id))
    return wire.envelope(wire.retried_dict(retried))


@router.post(
    "/memories/{memory_id}/messages/{message_id}/extract",
    summary="Queue the extraction of one turn again",
)
def retry_extraction(
    engine: EngineDep, actor: Actor, memory_id: MemoryId, message_id: params.MessageId
) -> Any:
    job = engine.retry_extraction(actor, params.path_memory_id(memory_id), message_id)
    return wire.envelope(wire.job_dict(job))


@router.post(
    "/memories/{memory_id}/chat-test",
    summary="Send one tiny request through the memory's chat model; ok or the model's error",
)
def test_chat_model(engine: EngineDep, actor: Actor, memory_id: MemoryId) -> Any:
    check = engine.test_chat_model(actor, params.path_memory_id(memory_id))
    return wire.envelope(wire.chat_check_dict(check))


@router.get(
    "/memories/{memory_id}/export",
    summary="Export a memory as JSONL",
    response_class=Response,
    responses={200: {"content": {"application/x-ndjson": {"schema": {"type": "string"}}}}},
)
def export_memory(engine: EngineDep, actor: Actor, memory_id: MemoryId) -> Response:
    mid = params.path_memory_id(memory_id)
    text = transfer.to_jsonl(engine.export_memory(actor, mid))
    disposition = f'attachment; filename="memory-{mid}.jsonl"'
    return Response(text, media_type=JSONL, headers={"Content-Disposition": disposition})


JSONL = "application/x-ndjson"
ImportBody = Annotated[
    Any,
    Body(
        media_type=JSONL,
        description="JSONL as written by export (or a JSON array of the same records).",
        json_schema_extra={"type": "string"},
    ),
]


@router.post(
    "/memories/{memory_id}/import",
    summary="Import JSONL into a memory",
    openapi_extra=REQUIRED_BODY,
)
def import_into(
    engine: EngineDep, actor: Actor, memory_id: MemoryId, body: ImportBody = None
) -> Any:
    report = engine.import_memory(actor, params.path_memory_id(memory_id), _records(body))
    return wire.envelope(transfer.report_dict(report))


@router.post(
    "/memories/import",
    summary="Import JSONL as a new memory (from its header)",
    openapi_extra=REQUIRED_BODY,
)
def import_new(engine: EngineDep, actor: Actor, body: ImportBody = None) -> Any:
    report = engine.import_memory(actor, None, _records(body))
    return wire.envelope(transfer.report_dict(report))


def _records(body: object) -> Iterable[object]:
    if isinstance(body, bytes):
        try:
            body = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInput("records", "the import is not UTF-8 text.") from exc
    if isinstance(body, str):
        return transfer.parse_jsonl(body)
    if isinstance(body, list):
        return body
    raise InvalidInput("records", "send JSONL text (application/x-ndjson) or a JSON array.")


#: Routes whose bodies are imports: they take ``max_import_bytes`` instead of ``max_body_bytes``.
IMPORTS = (import_into, import_new)

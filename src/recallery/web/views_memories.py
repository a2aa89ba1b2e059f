"""Memories: the list (search, filters named as REST's GET /memories names them, create,
delete), a memory's overview (entries over
time, the capacity gauge), its configuration with export and import, and its jobs."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from recallery.engine import Engine
from recallery.errors import Conflict, Forbidden, InvalidInput
from recallery.models import EntryType, Memory, Outcome
from recallery.requests import ImportReport
from recallery.requests.runs import ChatCheck
from recallery.services.extraction import RETRYABLE
from recallery.web.chart import chart
from recallery.web.edge.guard import takes_files
from recallery.web.edge.params import id_list
from recallery.web.frame import (
    Posted,
    Viewer,
    Web,
    WebDep,
    WebRoute,
    Who,
    back,
    local,
    number,
    page,
    web,
)
from recallery.wire import transfer

router = APIRouter(route_class=WebRoute, include_in_schema=False)

Text = Annotated[str | None, Query()]
Many = Annotated[list[str] | None, Query()]
#: The list's filters, by REST's names: the name's part, and the types and owners (lists).
Wanted = dict[str, Any]
PAGE_SIZE = 20
#: The largest import file the page takes.
MAX_IMPORT_BYTES = 64 * 1024 * 1024


@router.get("/")
def memories(
    request: Request,
    parts: WebDep,
    who: Who,
    keywords: Text = None,
    memory_type: Many = None,
    owner_ids: Many = None,
    q: Text = None,
    type: Text = None,
    owner: Text = None,
    page_number: Annotated[int, Query(alias="page", ge=1, le=10**6)] = 1,
) -> Response:
    """The memories the viewer can see, filtered as REST's GET /memories names its filters
    (``keywords``, ``memory_type``, ``owner_ids``: each list repeated or comma-separated);
    the old ``q``, ``type`` and ``owner`` are still read, one release."""
    wanted: Wanted = {
        "keywords": (keywords or q or "").strip(),
        "memory_type": id_list(memory_type or [type or ""], "memory_type"),
        "owner_ids": id_list(owner_ids or [owner or ""], "owner_ids"),
    }
    return _list_page(request, parts, who, wanted, page_number)


def _list_page(
    request: Request,
    parts: WebDep,
    who: Viewer,
    wanted: Wanted,
    number: int = 1,
    form: dict[str, Any] | None = None,
    errors: dict[str, str] | None = None,
) -> Response:
    engine, me = parts.engine, who.principal
    found = engine.list_memories(
        me,
        keywords=wanted["keywords"] or None,
        memory_types=wanted["memory_type"] or None,
        owner_ids=wanted["owner_ids"] or None,
        page=number,
        page_size=PAGE_SIZE,
    )
    owners = sorted(me.tenant_ids)
    offered = _offered(engine)
    return page(
        request,
        who,
        "memories.html",
        400 if errors else 200,
        memories=found.items,
        total=found.total,
        number=number,
        pages=max(1, -(-found.total // PAGE_SIZE)),
        wanted=wanted,
        query=urlencode({k: v for k, v in wanted.items() if v}, doseq=True),
        owners=owners,
        names=engine.user_names([*owners, *(m.tenant_id for m in found.items)]),
        types=[t.value for t in EntryType.extracted()],
        offered=offered,
        # the first model offered (the local embedder), so the default is one the list names
        form=form or {"embd_id": offered[0][0], "memory_type": ["raw"], "permissions": "me"},
        errors=errors or {},
    )


def _offered(engine: Engine) -> list[tuple[str, str]]:
    """The model ids the forms offer (the local embedders, one per configured provider),
    each with what it resolves to."""
    return [(m, engine.describe_model(m)) for m in engine.offered_models()]


def _described(engine: Engine, model_id: str) -> str:
    """What ``model_id`` resolves to, as a sentence (or why it cannot be read)."""
    try:
        return engine.model_resolution(model_id)
    except InvalidInput as exc:
        return str(exc)


@router.post("/memories")
def create_memory(request: Request, parts: WebDep, who: Who, form: Posted) -> Response:
    sent: dict[str, Any] = {
        "name": form.text("name"),
        "memory_type": ["raw", *form.texts("memory_type")],
        "embd_id": form.text("embd_id"),
        "llm_id": form.text("llm_id"),
        "permissions": form.text("permissions", "me") or "me",
        "description": form.text("description"),
    }
    options: dict[str, object] = {"permissions": sent["permissions"]}
    if sent["description"]:
        options["description"] = sent["description"]
    if form.text("memory_size"):
        options["memory_size"] = number(form.text("memory_size"), int)
    try:
        memory = parts.engine.create_memory(
            who.principal,
            name=sent["name"],
            memory_type=sent["memory_type"],
            embd_id=sent["embd_id"],
            llm_id=sent["llm_id"],
            **options,
        )
    except (InvalidInput, Forbidden) as exc:
        field = exc.field if isinstance(exc, InvalidInput) else "name"
        empty: Wanted = {"keywords": "", "memory_type": [], "owner_ids": []}
        return _list_page(request, parts, who, empty, form=sent, errors={field: str(exc)})
    who.flash(f"Memory {memory.name} created.")
    return back(f"/memories/{memory.id}")


@router.get("/memories/{memory_id}")
def overview(
    request: Request,
    parts: WebDep,
    who: Who,
    memory_id: str,
    bucket: str = "day",
    clock: str = "recorded",
) -> Response:
    engine, me = parts.engine, who.principal
    memory = engine.get_memory(me, memory_id)
    counts = {"hour": 48, "day": 30, "week": 26}
    line = engine.timeline(
        me, memory.id, bucket=bucket, buckets=counts.get(bucket, 30), clock=clock
    )
    return page(
        request,
        who,
        "memory.html",
        memory=memory,
        tab="overview",
        owner=engine.user_names([memory.tenant_id]).get(memory.tenant_id, memory.tenant_id),
        chart=chart(line, memory.id),
        bucket=line.bucket.value,
        clock=line.clock.value,
        waiting=engine.review_queue(me, memory.id, page_size=1).total,
        costs=engine.extraction_costs(me, memory.id),
    )


@router.get("/memories/{memory_id}/delete")
def confirm_delete(request: Request, parts: WebDep, who: Who, memory_id: str) -> Response:
    memory = parts.engine.get_memory(who.principal, memory_id)
    return page(request, who, "delete.html", memory=memory, error="")


@router.post("/memories/{memory_id}/delete")
def delete(request: Request, parts: WebDep, who: Who, form: Posted, memory_id: str) -> Response:
    memory = parts.engine.get_memory(who.principal, memory_id)
    if form.text("confirm") != memory.name:
        error = "Type the memory's name exactly to delete it."
        return page(request, who, "delete.html", 400, memory=memory, error=error)
    parts.engine.delete_memory(who.principal, memory.id)
    who.flash(f"Memory {memory.name} deleted, with its {memory.entry_count} entries.")
    return back("/")


# --- configuration, export and import -------------------------------------------------------


@router.get("/memories/{memory_id}/config")
def config(request: Request, parts: WebDep, who: Who, memory_id: str) -> Response:
    memory = parts.engine.get_memory(who.principal, memory_id)
    return _config_page(request, who, memory)


@router.post("/memories/{memory_id}/config/test-chat")
def test_chat(request: Request, parts: WebDep, who: Who, form: Posted, memory_id: str) -> Response:
    """One tiny request through the memory's chat model; the answer shows beside the button
    (htmx swaps only that; without script the whole page comes back with it)."""
    engine, me = parts.engine, who.principal
    try:
        check = engine.test_chat_model(me, memory_id)
    except Forbidden as exc:
        check = ChatCheck(engine.get_memory(me, memory_id).llm_id, False, error=str(exc))
    memory = engine.get_memory(me, memory_id)
    return _config_page(request, who, memory, check=check)


def _config_page(
    request: Request,
    who: Viewer,
    memory: Memory,
    errors: dict[str, str] | None = None,
    report: ImportReport | None = None,
    check: ChatCheck | None = None,
) -> Response:
    engine = web(request).engine
    return page(
        request,
        who,
        "config.html",
        400 if errors else 200,
        memory=memory,
        tab="config",
        locked=memory.entry_count > 0,
        types=[t.value for t in EntryType.extracted()],
        errors=errors or {},
        report=report,
        check=check,
        offered=_offered(engine),
        embd_is=_described(engine, memory.model_id),
        llm_is=_described(engine, memory.llm_id),
    )


@router.post("/memories/{memory_id}/config")
def update_config(
    request: Request, parts: WebDep, who: Who, form: Posted, memory_id: str
) -> Response:
    engine, me = parts.engine, who.principal
    memory = engine.get_memory(me, memory_id)
    changes: dict[str, object] = {
        "name": form.text("name"),
        "llm_id": form.text("llm_id"),
        "permissions": form.text("permissions"),
        "forgetting_policy": form.text("forgetting_policy"),
        "memory_size": number(form.text("memory_size"), int, ""),
        "temperature": number(form.text("temperature"), float, ""),
        "description": form.text("description"),
        "system_prompt": form.raw("system_prompt"),
        "user_prompt": form.raw("user_prompt") or None,
    }
    if memory.entry_count == 0:  # locked once the memory holds entries
        changes["embd_id"] = form.text("embd_id")
        changes["memory_type"] = ["raw", *form.texts("memory_type")]
    if changes["user_prompt"] is None and memory.user_prompt is None:
        del changes["user_prompt"]
    try:
        updated = engine.update_memory(me, memory.id, changes)
    except (InvalidInput, Forbidden, Conflict) as exc:
        field = exc.field if isinstance(exc, InvalidInput) else "form"
        return _config_page(request, who, memory, {field: str(exc)})
    who.flash("Configuration saved.")
    return back(f"/memories/{updated.id}/config")


@router.get("/memories/{memory_id}/export")
def export(parts: WebDep, who: Who, memory_id: str) -> Response:
    memory = parts.engine.get_memory(who.principal, memory_id)
    text = transfer.to_jsonl(parts.engine.export_memory(who.principal, memory.id))
    disposition = f'attachment; filename="memory-{memory.id}.jsonl"'
    headers = {"Content-Disposition": disposition}
    return Response(text, media_type="application/x-ndjson", headers=headers)


@router.post("/memories/{memory_id}/import")
@takes_files
async def import_file(
    request: Request, parts: WebDep, who: Who, form: Posted, memory_id: str
) -> Response:
    """Read the upload (never past the limit), then import it in a worker thread."""
    upload = form.file("file")
    data = b"" if upload is None else await upload.read(MAX_IMPORT_BYTES + 1)
    return await run_in_threadpool(_import_records, request, parts, who, memory_id, data)


def _import_records(
    request: Request, parts: Web, who: Viewer, memory_id: str, data: bytes
) -> Response:
    engine, me = parts.engine, who.principal
    memory = engine.get_memory(me, memory_id)
    try:
        if not data:
            raise InvalidInput("file", "Choose a JSONL file to import.")
        if len(data) > MAX_IMPORT_BYTES:
            raise InvalidInput("file", f"The file is larger than {MAX_IMPORT_BYTES} bytes.")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInput("file", "The file is not UTF-8 text.") from exc
        report = engine.import_memory(me, memory.id, transfer.parse_jsonl(text))
    except (InvalidInput, Forbidden) as exc:
        field = exc.field if isinstance(exc, InvalidInput) else "file"
        return _config_page(request, who, memory, {"file": f"{field}: {exc}"})
    return _config_page(request, who, engine.get_memory(me, memory.id), report=report)


# --- jobs -----------------------------------------------------------------------------------


@router.get("/memories/{memory_id}/jobs")
def jobs(
    request: Request,
    parts: WebDep,
    who: Who,
    memory_id: str,
    state: Text = None,
    page_number: Annotated[int, Query(alias="page", ge=1, le=10**6)] = 1,
) -> Response:
    engine, me = parts.engine, who.principal
    memory = engine.get_memory(me, memory_id)
    found = engine.jobs(me, memory.id, state=state or None, page=page_number, page_size=50)
    costs = engine.extraction_costs(me, memory.id)
    return page(
        request,
        who,
        "jobs.html",
        memory=memory,
        tab="jobs",
        jobs=found.items,
        total=found.total,
        number=page_number,
        pages=max(1, -(-found.total // 50)),
        state=state or "",
        states=costs.states,
        costs=costs,
        retryable={o.value for o in RETRYABLE} | {Outcome.SKIPPED.value},
    )


@router.post("/memories/{memory_id}/jobs/retry")
def retry_failed(
    request: Request, parts: WebDep, who: Who, form: Posted, memory_id: str
) -> Response:
    """Queue every turn whose last extraction failed again."""
    try:
        retried = parts.engine.retry_failed_extraction(who.principal, memory_id)
    except (InvalidInput, Forbidden) as exc:
        who.flash(f"Not retried: {exc}")
        return back(f"/memories/{parts.engine.get_memory(who.principal, memory_id).id}/jobs")
    n = len(retried.job_ids)
    plural = "" if n == 1 else "s"
    who.flash(f"Queued {n} failed extraction{plural} again." if n else "Nothing failed to retry.")
    return back(f"/memories/{retried.memory_id}/jobs")


@router.post("/memories/{memory_id}/entries/{message_id}/extract")
def retry_turn(
    request: Request, parts: WebDep, who: Who, form: Posted, memory_id: str, message_id: str
) -> Response:
    """Queue one turn's extraction again."""
    memory = parts.engine.get_memory(who.principal, memory_id)
    try:
        job = parts.engine.retry_extraction(who.principal, memory.id, message_id)
        who.flash(f"Turn {job.message_id}'s extraction is queued again (job {job.id}).")
    except (InvalidInput, Forbidden, Conflict) as exc:
        who.flash(f"Not retried: {exc}")
    return back(local(form.text("next"), f"/memories/{memory.id}/jobs"))

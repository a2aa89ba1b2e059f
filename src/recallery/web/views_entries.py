"""One entry: provenance, version history with the reasons for each correction, retrieval
statistics and audit events; correct, review and erase (type-to-confirm, then the receipt).
And the review queue: unreviewed extracts, oldest first, confirmed or rejected one at a time
(from the keyboard) or in bulk."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from recallery.errors import Conflict, Forbidden, InvalidInput, NotFound
from recallery.models import AuditAction, Capability, Entry
from recallery.requests import ReviewPage
from recallery.web.frame import Posted, Viewer, Web, WebDep, WebRoute, Who, back, local, page
from recallery.web.listing import OLD_NAMES, by_wire_name, chosen
from recallery.web.render import is_htmx

router = APIRouter(route_class=WebRoute, include_in_schema=False)

QUEUE_PAGE = 20
#: The review queue's filters (query parameters, and hidden fields of its verdict form).
QUEUE_FILTERS = ("user_id", "message_type")


@router.get("/memories/{memory_id}/entries/{message_id}")
def entry(request: Request, parts: WebDep, who: Who, memory_id: str, message_id: str) -> Response:
    return _entry_page(request, parts, who, memory_id, message_id)


def _entry_page(
    request: Request,
    parts: Web,
    who: Viewer,
    memory_id: str,
    message_id: str,
    errors: dict[str, str] | None = None,
    sent: dict[str, str] | None = None,
) -> Response:
    engine, me = parts.engine, who.principal
    memory = engine.get_memory(me, memory_id)
    try:
        found, _ = engine.get_entry(me, memory.id, message_id)
    except NotFound:
        return _tombstone_page(request, parts, who, memory.id, message_id)
    versions = engine.history(me, memory.id, found.message_id)
    reasons = {v.message_id: _reason(parts, who, memory.id, v) for v in versions if v.supersedes}
    sources = [_entry_or_none(parts, who, memory.id, i) for i in _evidence(parts, who, found)]
    events = engine.audit_log(me, memory_id=memory.id, message_id=found.message_id, limit=200)
    return page(
        request,
        who,
        "entry.html",
        400 if errors else 200,
        memory=memory,
        tab="messages",
        entry=found,
        versions=versions,
        current=next((x for x in versions if x.retired_at is None), None),
        reasons=reasons,
        sources=[s for s in sources if s is not None],
        events=events.items,
        names=engine.user_names({e.actor for e in events.items}),
        errors=errors or {},
        sent=sent or {},
        is_owner=memory.tenant_id == me.user_id,
        reads=engine.entry_reads(me, memory.id, found.message_id),
    )


def _tombstone_page(
    request: Request, parts: Web, who: Viewer, memory_id: str, message_id: str
) -> Response:
    """An erased entry: its tombstone and receipt (404, so links and crawlers see it gone);
    an entry never erased stays a plain not-found."""
    engine = parts.engine
    gone = engine.tombstone(who.principal, memory_id, message_id)
    memory = engine.get_memory(who.principal, memory_id)
    names = engine.user_names([gone.tombstone.actor])
    return page(
        request, who, "tombstone.html", 404, memory=memory, tab="messages", gone=gone, names=names
    )


def _reason(parts: Web, who: Viewer, memory_id: str, version: Entry) -> str:
    """Why a version was written: the reason of its correction's audit event."""
    events = parts.engine.audit_log(
        who.principal,
        memory_id=memory_id,
        message_id=version.message_id,
        action=AuditAction.ENTRY_CORRECT.value,
        limit=1,
    )
    return events.items[0].reason if events.items else ""


def _evidence(parts: Web, who: Viewer, e: Entry) -> list[int]:
    if e.source_id is None:
        return []
    return parts.engine.evidence(who.principal, e.memory_id, e.message_id)


def _entry_or_none(parts: Web, who: Viewer, memory_id: str, message_id: int) -> Entry | None:
    try:
        return parts.engine.get_entry(who.principal, memory_id, message_id)[0]
    except NotFound:  # erased since
        return None


@router.post("/memories/{memory_id}/entries/{message_id}/correct")
def correct(
    request: Request, parts: WebDep, who: Who, form: Posted, memory_id: str, message_id: str
) -> Response:
    sent = {"content": form.raw("content"), "reason": form.text("reason")}
    try:
        new = parts.engine.correct(
            who.principal, memory_id, message_id, sent["content"], reason=sent["reason"]
        )
    except (InvalidInput, Conflict) as exc:
        field = exc.field if isinstance(exc, InvalidInput) else "content"
        errors = {field: str(exc)}
        return _entry_page(request, parts, who, memory_id, message_id, errors, sent)
    trust = "" if new.trust.value == "unreviewed" else f", {new.trust.value}"
    who.flash(f"Corrected: version {new.message_id}{trust} replaces {message_id}.")
    own = f"/memories/{new.memory_id}/entries/{new.message_id}"
    return back(local(form.text("next"), own))


@router.post("/memories/{memory_id}/entries/{message_id}/reinstate")
def reinstate(
    request: Request, parts: WebDep, who: Who, form: Posted, memory_id: str, message_id: str
) -> Response:
    sent = {"reason": form.text("reason")}
    try:
        back_ = parts.engine.reinstate(who.principal, memory_id, message_id, sent["reason"])
    except (InvalidInput, Conflict, Forbidden) as exc:
        errors = {"reinstate": str(exc)}
        return _entry_page(request, parts, who, memory_id, message_id, errors, sent)
    who.flash(f"Reinstated: message {back_.message_id} is the current version again.")
    return back(f"/memories/{back_.memory_id}/entries/{back_.message_id}")


@router.post("/memories/{memory_id}/entries/{message_id}/review")
def review(
    request: Request, parts: WebDep, who: Who, form: Posted, memory_id: str, message_id: str
) -> Response:
    verdict = form.text("verdict")
    reviewed = parts.engine.review(
        who.principal, memory_id, message_id, verdict, form.text("reason")
    )
    if is_htmx(request) and not form.flag("redirect"):  # the queue swaps in its card
        given = by_wire_name({k: form.text(k) for k in (*QUEUE_FILTERS, *OLD_NAMES)})
        wanted = chosen(given, QUEUE_FILTERS)
        queue: ReviewPage | None = None
        applied: dict[str, str] = {}
        if Capability.READ in who.principal.capabilities:  # and its count, to a key that reads
            queue, applied, _ = _waiting(parts, who, memory_id, wanted, page_size=1)
        return page(request, who, "_reviewed.html", entry=reviewed, queue=queue, applied=applied)
    who.flash(f"Message {reviewed.message_id} is {reviewed.trust.value}.")
    return back(local(form.text("next"), f"/memories/{memory_id}/entries/{message_id}"))


@router.post("/memories/{memory_id}/entries/{message_id}/erase")
def erase(
    request: Request, parts: WebDep, who: Who, form: Posted, memory_id: str, message_id: str
) -> Response:
    if form.text("confirm") != message_id:
        errors = {"confirm": f"Type {message_id} to confirm the erasure."}
        return _entry_page(request, parts, who, memory_id, message_id, errors)
    try:
        receipt = parts.engine.erase(
            who.principal, memory_id, message_id, reason=form.text("reason")
        )
    except Forbidden as exc:
        return _entry_page(request, parts, who, memory_id, message_id, {"confirm": str(exc)})
    count = len(receipt.erased)
    who.flash(f"Erased {count} entr{'y' if count == 1 else 'ies'}: only tombstones remain.")
    # the entry's own page is now its tombstone with the receipt; reloading it erases nothing
    return back(f"/memories/{memory_id}/entries/{message_id}")


# --- the review queue -----------------------------------------------------------------------


@router.get("/memories/{memory_id}/review")
def queue(
    request: Request,
    parts: WebDep,
    who: Who,
    memory_id: str,
    number: Annotated[int, Query(alias="page", ge=1, le=10**6)] = 1,
    user_id: Annotated[str, Query()] = "",
    message_type: Annotated[str, Query()] = "",
    user: Annotated[str, Query()] = "",
    kind: Annotated[str, Query(alias="type")] = "",
) -> Response:
    """The queue, filtered by ``user_id`` and ``message_type`` (REST's names; the old
    ``user`` and ``type`` are still read)."""
    memory = parts.engine.get_memory(who.principal, memory_id)
    given = {"user_id": user_id, "message_type": message_type, "user": user, "type": kind}
    wanted = chosen(by_wire_name(given), QUEUE_FILTERS)
    found, applied, error = _waiting(parts, who, memory.id, wanted, number, QUEUE_PAGE)
    return page(
        request,
        who,
        "review.html",
        400 if error else 200,
        memory=memory,
        wanted=wanted,
        applied=applied,
        error=error,
        query=urlencode(wanted),
        tab="review",
        items=found.items,
        total=found.total,
        number=number,
        pages=max(1, -(-found.total // QUEUE_PAGE)),
    )


def _waiting(
    parts: Web,
    who: Viewer,
    memory_id: str,
    wanted: dict[str, str],
    number: int = 1,
    page_size: int = QUEUE_PAGE,
) -> tuple[ReviewPage, dict[str, str], str]:
    """The review queue's page for the filters ``wanted``, the filters it applied and the
    engine's error: a filter refused leaves the queue unfiltered, with the reason."""
    engine, me = parts.engine, who.principal
    try:
        found = engine.review_queue(
            me,
            memory_id,
            user_id=wanted.get("user_id"),
            types=wanted.get("message_type"),
            page=number,
            page_size=page_size,
        )
    except InvalidInput as exc:
        return engine.review_queue(me, memory_id, page_size=page_size), {}, str(exc)
    return found, wanted, ""


@router.post("/memories/{memory_id}/review")
def review_many(parts: WebDep, who: Who, form: Posted, memory_id: str) -> Response:
    ids: list[Any] = form.texts("ids")
    if not ids:
        who.flash("Tick the entries to review first.")
        return back(f"/memories/{memory_id}/review")
    verdict = {"confirmed": "confirm", "rejected": "reject"}.get(form.text("verdict"), "")
    result = parts.engine.bulk(
        who.principal,
        memory_id,
        verdict,
        message_ids=ids,
        dry_run=False,
        reason=form.text("reason"),
    )
    who.flash(f"{result.action.value}: {len(result.changed)} of {result.count} entries changed.")
    return back(local(form.text("next"), f"/memories/{memory_id}/review"))

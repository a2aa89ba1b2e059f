"""People: what the memories the viewer may read hold about one end user, agent or session
(counts per memory, their newest facts, entries per day), and, for a user, the data-subject
request: forget or erase everything about them, the dry run's receipt shown first."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Request
from starlette.responses import Response

from recallery.errors import Conflict, InvalidInput
from recallery.subjects import SubjectAction, SubjectKind, SubjectReceipt
from recallery.web.frame import Form, Posted, Viewer, Web, WebDep, WebRoute, Who, back, page

router = APIRouter(route_class=WebRoute, include_in_schema=False)


@router.get("/people")
def people(request: Request, who: Who, kind: str = "user", value: str = "") -> Response:
    """Find a user, agent or session by its id."""
    if value.strip() and kind in {k.value for k in SubjectKind}:
        return back(f"/people/{kind}/{value.strip()}")
    return page(request, who, "people.html", kind=kind, value=value, kinds=list(SubjectKind))


@router.get("/people/user/{value:path}/forget")
def forget_preview(request: Request, parts: WebDep, who: Who, value: str) -> Response:
    """What forgetting everything about the user would change: a dry run."""
    return _preview(request, parts, who, SubjectAction.FORGET, value)


@router.get("/people/user/{value:path}/erase")
def erase_preview(request: Request, parts: WebDep, who: Who, value: str) -> Response:
    """What erasing everything about the user would change: a dry run."""
    return _preview(request, parts, who, SubjectAction.ERASE, value)


@router.post("/people/user/{value:path}/forget")
def forget(request: Request, parts: WebDep, who: Who, form: Posted, value: str) -> Response:
    return _apply(request, parts, who, form, SubjectAction.FORGET, value)


@router.post("/people/user/{value:path}/erase")
def erase(request: Request, parts: WebDep, who: Who, form: Posted, value: str) -> Response:
    return _apply(request, parts, who, form, SubjectAction.ERASE, value)


def _preview(request: Request, parts: Web, who: Viewer, action: str, value: str) -> Response:
    """The dry run; after applying (``?done``), the receipt of what was applied, kept in the
    session so that reloading it shows it again and changes nothing."""
    done = who.session.applied.get((action, value)) if "done" in request.query_params else None
    receipt = done or _request(parts, who, action, value, dry_run=True, reason="")
    return page(request, who, "subject_receipt.html", receipt=receipt, errors={})


def _apply(
    request: Request, parts: Web, who: Viewer, form: Form, action: str, value: str
) -> Response:
    reason = form.text("reason")
    if action == SubjectAction.ERASE and form.text("confirm") != value:
        receipt = _request(parts, who, action, value, dry_run=True, reason="")
        errors = {"confirm": f"Type {value} to confirm the erasure."}
        return page(request, who, "subject_receipt.html", 400, receipt=receipt, errors=errors)
    token = form.text("token") or None
    try:
        receipt = _request(parts, who, action, value, dry_run=False, reason=reason, token=token)
    except (InvalidInput, Conflict) as exc:
        receipt = _request(parts, who, action, value, dry_run=True, reason="")
        field = exc.field if isinstance(exc, InvalidInput) else "token"
        status = 400 if isinstance(exc, InvalidInput) else 409
        return page(
            request, who, "subject_receipt.html", status, receipt=receipt, errors={field: str(exc)}
        )
    who.session.applied[(action, value)] = receipt
    return back(f"/people/user/{quote(value)}/{action}?done")


@router.get("/people/{kind}/{value:path}")
def person(request: Request, parts: WebDep, who: Who, kind: str, value: str) -> Response:
    profile = parts.engine.subject_profile(who.principal, kind, value)
    peak = max(profile.per_day, default=0)
    return page(
        request,
        who,
        "person.html",
        profile=profile,
        days=[(d, n) for d, n in zip(profile.days, profile.per_day, strict=True) if n],
        peak=peak,
    )


def _request(
    parts: Web,
    who: Viewer,
    action: str,
    value: str,
    *,
    dry_run: bool,
    reason: str,
    token: str | None = None,
) -> SubjectReceipt:
    engine = parts.engine
    run = engine.forget_subject if action == SubjectAction.FORGET else engine.erase_subject
    return run(who.principal, value, dry_run=dry_run, reason=reason, token=token)

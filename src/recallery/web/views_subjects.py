"""Data subjects, under the page's human title People: the end users, agents and sessions of
the memories the viewer may read, listed with their counts of facts and turns and their last
activity, searched by a part of the id (``keywords``, as REST names it; the old ``q`` is still
read) and paged (``page_size``, as REST names it; the old ``size`` is still read); what those
memories hold about one of them (counts per memory, their newest facts, entries per day); and,
for a user, the data-subject request: forget or erase everything about them, the dry run's
receipt shown first.

Every address carries the id as a query parameter (:func:`~recallery.web.links.person_url`),
so any id, ``..`` or ``a/b?c#d`` or ``王小明``, reaches its page and its forms unchanged."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from recallery.errors import Conflict, InvalidInput
from recallery.requests.subjects import SubjectAction, SubjectKind, SubjectReceipt
from recallery.web.frame import Form, Posted, Viewer, Web, WebDep, WebRoute, Who, back, page
from recallery.web.links import person_url
from recallery.web.listing import PageSize

router = APIRouter(route_class=WebRoute, include_in_schema=False)

#: The id a page is about (the query parameter ``id``).
Id = Annotated[str, Query(alias="id")]


@router.get("/people")
def list_subjects(
    request: Request,
    parts: WebDep,
    who: Who,
    size: PageSize,
    kind: str = "user",
    keywords: str = "",
    q: str = "",
    number: Annotated[int, Query(alias="page", ge=1, le=10**6)] = 1,
) -> Response:
    """The users (or agents, or sessions) of the memories the viewer may read, newest
    activity first, those whose id contains ``keywords`` (``q``: its old name)."""
    keywords = keywords or q
    found = parts.engine.list_subjects(
        who.principal, kind, keywords=keywords, page=number, page_size=size
    )
    kept = {
        "kind": kind,
        "keywords": keywords.strip(),
        "page_size": "" if size == 50 else str(size),
    }
    return page(
        request,
        who,
        "people.html",
        kind=kind,
        kinds=list(SubjectKind),
        keywords=keywords,
        found=found,
        number=number,
        pages=max(1, -(-found.total // size)),
        query=urlencode({k: v for k, v in kept.items() if v}),
    )


@router.get("/people/user/forget")
def forget_preview(request: Request, parts: WebDep, who: Who, value: Id = "") -> Response:
    """What forgetting everything about the user would change: a dry run."""
    return _preview(request, parts, who, SubjectAction.FORGET, value)


@router.get("/people/user/erase")
def erase_preview(request: Request, parts: WebDep, who: Who, value: Id = "") -> Response:
    """What erasing everything about the user would change: a dry run."""
    return _preview(request, parts, who, SubjectAction.ERASE, value)


@router.post("/people/user/forget")
def forget(request: Request, parts: WebDep, who: Who, form: Posted, value: Id = "") -> Response:
    return _apply(request, parts, who, form, SubjectAction.FORGET, value)


@router.post("/people/user/erase")
def erase(request: Request, parts: WebDep, who: Who, form: Posted, value: Id = "") -> Response:
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
    return back(person_url(SubjectKind.USER, value, action, done=True))


@router.get("/people/{kind}")
def person(request: Request, parts: WebDep, who: Who, kind: str, value: Id = "") -> Response:
    """What the memories the viewer may read hold about the user, agent or session ``id``."""
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

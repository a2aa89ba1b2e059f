"""A memory's Messages page: raw turns newest first, paged on the server, each with what was
extracted from it and its extraction task; filters; the row actions (enable switch, forget,
restore); and bulk changes, previewed by a dry run before anything changes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from recallery.engine import Engine
from recallery.errors import Conflict, Forbidden, InvalidInput
from recallery.models import Principal
from recallery.requests import BulkAction, MessageFilter, MessagePage
from recallery.web.frame import Form, Posted, WebDep, WebRoute, Who, back, local, page
from recallery.web.listing import (
    OLD_NAMES,
    PageSize,
    by_rest_values,
    by_wire_name,
    chosen,
    flag,
    listed,
    listing,
)
from recallery.wire import curation

router = APIRouter(route_class=WebRoute, include_in_schema=False)

#: The page's filter fields (query parameters, and hidden fields of the bulk form).
FILTERS = (
    "agent_id",
    "session_id",
    "keywords",
    "user_id",
    "message_type",
    "status",
    "trust",
    "forgotten",
)
#: The time spans a timeline bar links to (the declared filters' own names).
SPANS = ("recorded_since", "recorded_before", "valid_since", "valid_before")
Text = Annotated[str | None, Query()]
#: The status field's old values (one release), each the REST filter and value it is.
OLD_STATUSES = {"enabled": ("status", "true"), "disabled": ("status", "false")}


def selection(values: Mapping[str, str]) -> MessageFilter:
    """The filter fields (by their REST names) as the engine's Messages filter (each
    checked, naming its field)."""
    values = by_rest_values(values, OLD_STATUSES)
    shaped: dict[str, Any] = {
        **{k: values.get(k) for k in (*FILTERS, *SPANS)},
        "status": flag(values, "status"),
        "forgotten": flag(values, "forgotten"),
    }
    return curation.message_filter_from_dict({k: v for k, v in shaped.items() if v is not None})


def turns(
    engine: Engine, me: Principal, memory_id: str, f: MessageFilter, number: int, size: int
) -> MessagePage:
    """The page of turns ``f`` selects."""
    return engine.list_messages(me, memory_id, f, page=number, page_size=size)


@router.get("/memories/{memory_id}/messages")
def messages(
    request: Request,
    parts: WebDep,
    who: Who,
    memory_id: str,
    size: PageSize,
    number: Annotated[int, Query(alias="page", ge=1, le=10**6)] = 1,
) -> Response:
    engine, me = parts.engine, who.principal
    shown = listing(request, parts, who, memory_id, FILTERS + SPANS, number, size)
    shown = replace(shown, wanted=by_rest_values(shown.wanted, OLD_STATUSES))

    def select(wanted: Mapping[str, str], number: int, size: int) -> MessagePage:
        return turns(engine, me, shown.memory.id, selection(wanted), number, size)

    return listed(
        request,
        who,
        "messages.html",
        shown,
        select,
        tab="messages",
        actions=[a.value for a in BulkAction],
        bulk=who.session.bulk,
        expand=request.query_params.get("open") == "1",
    )


# --- row actions ----------------------------------------------------------------------------


def _after(form: Form, memory_id: str) -> Response:
    return back(local(form.text("next"), f"/memories/{memory_id}/messages"))


@router.post("/memories/{memory_id}/entries/{message_id}/status")
def set_status(parts: WebDep, who: Who, form: Posted, memory_id: str, message_id: str) -> Response:
    parts.engine.set_status(who.principal, memory_id, message_id, form.flag("enabled"))
    return _after(form, memory_id)


@router.post("/memories/{memory_id}/entries/{message_id}/forget")
def forget(parts: WebDep, who: Who, form: Posted, memory_id: str, message_id: str) -> Response:
    parts.engine.forget(who.principal, memory_id, message_id)
    return _after(form, memory_id)


@router.post("/memories/{memory_id}/entries/{message_id}/restore")
def restore(parts: WebDep, who: Who, form: Posted, memory_id: str, message_id: str) -> Response:
    parts.engine.restore(who.principal, memory_id, message_id)
    return _after(form, memory_id)


# --- bulk changes ---------------------------------------------------------------------------


def _previewed_again(
    request: Request,
    who: Who,
    engine: Engine,
    form: Form,
    shown: dict[str, Any],
    ids: list[str] | None,
    dry_run_of: str,
) -> Response:
    """Applying found the selection or its changes moved since the preview, so nothing was
    applied: a new preview, with what changed since the first one (its counts came back with
    the form)."""
    memory, every = shown["memory"], shown["every"]
    result = engine.bulk(
        who.principal,
        memory.id,
        dry_run_of,
        message_ids=ids,
        filter=selection(shown["wanted"]) if every else None,
        dry_run=True,
        reason=form.text("reason"),
    )
    before = {"selected": form.text("previewed_selected"), "count": form.text("previewed_count")}
    return page(
        request, who, "bulk.html", 409, result=result, error="", **{**shown, "since": before}
    )


@router.post("/memories/{memory_id}/bulk")
def bulk(request: Request, parts: WebDep, who: Who, form: Posted, memory_id: str) -> Response:
    """A dry run (``dry_run=1``) shows what would change and asks to apply; applying, with
    the preview's token, changes exactly what the preview showed, or nothing (the selection
    changed since: the page says so)."""
    engine, me = parts.engine, who.principal
    memory = engine.get_memory(me, memory_id)
    given = {k: form.text(f"f_{k}") for k in (*FILTERS, *SPANS, *OLD_NAMES)}
    wanted = by_rest_values(chosen(by_wire_name(given), FILTERS + SPANS), OLD_STATUSES)
    every = form.text("scope") == "all"
    ids = None if every else form.texts("ids")
    action, dry = form.text("action"), form.flag("dry_run")
    who.session.bulk = {"action": action, "reason": form.text("reason")}
    shown: dict[str, Any] = {
        "memory": memory,
        "tab": "messages",
        "every": every,
        "wanted": wanted,
        "reason": form.text("reason"),
        "next": local(form.text("next"), f"/memories/{memory.id}/messages"),
        "since": None,
    }
    try:
        if not every and not ids:
            raise InvalidInput("ids", "Tick some rows, or choose every turn matching the filter.")
        result = engine.bulk(
            me,
            memory.id,
            action,
            message_ids=ids,
            filter=selection(wanted) if every else None,
            dry_run=dry,
            reason=form.text("reason"),
            token=None if dry else form.text("token") or None,
        )
    except (InvalidInput, Forbidden) as exc:
        return page(request, who, "bulk.html", 400, result=None, error=str(exc), **shown)
    except Conflict:  # the selection changed since the preview: nothing changed
        return _previewed_again(request, who, engine, form, shown, ids, dry_run_of=action)
    if dry:
        return page(request, who, "bulk.html", result=result, error="", **shown)
    who.flash(
        f"{result.action.value}: {result.selected} selected, {result.count} entries "
        "changed (extracted entries and versions included), as the preview said."
    )
    return _after(form, memory.id)

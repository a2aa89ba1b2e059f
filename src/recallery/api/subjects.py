"""Data subjects, the people entries are about: forget or erase everything about one end user
(the ``user_id`` stored on entries) across the memories the key may change, a dry run by
default; what the memories the key may read hold about a user, agent or session; and the
listing of them with their counts of facts and turns and their last activity, searched by a
part of the id and paged as RAGFlow pages its lists (``GET /people`` is its old path, kept one
release out of the OpenAPI schema)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from pydantic import Field

from recallery import validation as v
from recallery import wire
from recallery.api.deps import Actor, EngineDep
from recallery.requests.subjects import SubjectKind
from recallery.web.edge import params
from recallery.web.edge import schemas as S
from recallery.web.edge.bodies import Lenient
from recallery.wire.entries import entry_dict
from recallery.wire.subjects import ROWS, subjects_page_dict

router = APIRouter(tags=["subjects"])

UserId = Annotated[
    str,
    Path(
        description="The end user's id, exactly as stored on entries (URL-encoded).",
        min_length=1,
        max_length=v.MAX_ID_TEXT,
    ),
]

Kind = Annotated[
    str | None,
    Query(
        description="Whom to list: end users (the default), agents or sessions.",
        json_schema_extra={"enum": [k.value for k in SubjectKind]},
    ),
]
Keywords = Annotated[
    str | None,
    Query(
        description="Only ids that contain this text (any case; `%` and `_` are literal).",
        json_schema_extra={"type": "string"},
    ),
]


class SubjectBody(Lenient):
    dry_run: Any = Field(
        None,
        description="Count only, change nothing (default true).",
        json_schema_extra=S.nullable(S.BOOLEAN),
    )
    reason: Any = Field(
        None, description="Why, for the audit log.", json_schema_extra=S.nullable(S.TEXT)
    )
    token: Any = Field(
        None,
        description="The dry run's token: applying changes exactly what it listed, or nothing "
        "(409 when what is held about the user changed since).",
        json_schema_extra=S.nullable(S.TOKEN),
    )
    everywhere: Any = Field(
        None,
        description="An operator's request over every tenant's memories (an administrator's "
        "unscoped key only; default false).",
        json_schema_extra=S.nullable(S.BOOLEAN),
    )


def _run(engine: Any, actor: Any, action: str, user_id: str, body: SubjectBody | None) -> Any:
    fields = body or SubjectBody.model_validate({})
    reason = "" if fields.reason is None else v.text(fields.reason, "reason", limit=1024)
    operation = engine.forget_subject if action == "forget" else engine.erase_subject
    receipt = operation(
        actor,
        user_id,
        dry_run=True if fields.dry_run is None else fields.dry_run,
        reason=reason,
        token=fields.token,
        everywhere=False if fields.everywhere is None else fields.everywhere,
    )
    return wire.envelope(wire.subject_receipt_dict(receipt))


@router.post(
    "/subjects/{user_id:path}/forget",
    summary="Forget everything about an end user in every memory the key may write "
    "(a dry run by default)",
)
def forget_subject(
    engine: EngineDep, actor: Actor, user_id: UserId, body: SubjectBody | None = None
) -> Any:
    return _run(engine, actor, "forget", user_id, body)


@router.post(
    "/subjects/{user_id:path}/erase",
    summary="Erase everything about an end user in every memory the key may erase "
    "(a dry run by default); cannot be undone",
)
def erase_subject(
    engine: EngineDep, actor: Actor, user_id: UserId, body: SubjectBody | None = None
) -> Any:
    return _run(engine, actor, "erase", user_id, body)


@router.get(
    "/subjects/{kind}/{value:path}",
    summary="What the memories the key may read hold about a user, agent or session",
)
def subject_profile(
    engine: EngineDep,
    actor: Actor,
    kind: Annotated[str, Path(json_schema_extra={"enum": [k.value for k in SubjectKind]})],
    value: Annotated[str, Path(min_length=1, max_length=v.MAX_ID_TEXT)],
) -> Any:
    found = engine.subject_profile(actor, kind, value)
    return wire.envelope(
        {
            "kind": found.kind.value,
            "value": found.value,
            "total": found.total,
            "memories": [
                {
                    "memory_id": m.memory_id,
                    "name": m.name,
                    "counts": {t.value: n for t, n in m.counts.items()},
                    "total": m.total,
                }
                for m in found.memories
            ],
            "facts": [entry_dict(e) for e in found.facts],
            "days": [d.isoformat() for d in found.days],
            "per_day": list(found.per_day),
        }
    )


def _listing(
    engine: Any, actor: Any, kind: str | None, keywords: str | None, page: Any, size: Any, rows: str
) -> Any:
    found = engine.list_subjects(
        actor,
        "user" if kind is None else kind,
        keywords=keywords,
        page=params.page(page),
        page_size=params.size(size, params.FALLBACK_SIZE),
    )
    return wire.envelope(subjects_page_dict(found, rows))


@router.get(
    "/subjects",
    summary="The end users, agents or sessions of the memories the key may read, with "
    "their counts of facts and turns and their last activity, newest first",
)
def list_subjects(
    engine: EngineDep,
    actor: Actor,
    kind: Kind = None,
    keywords: Keywords = None,
    page: params.Page = None,
    page_size: params.Size = None,
) -> Any:
    return _listing(engine, actor, kind, keywords, page, page_size, ROWS)


@router.get(
    "/people",
    summary="Deprecated: GET /subjects, its rows under people",
    deprecated=True,
    include_in_schema=False,
)
def people(
    engine: EngineDep,
    actor: Actor,
    kind: Kind = None,
    keywords: Keywords = None,
    page: params.Page = None,
    page_size: params.Size = None,
) -> Any:
    return _listing(engine, actor, kind, keywords, page, page_size, "people")

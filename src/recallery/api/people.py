"""The People listing: the end users, agents or sessions of the memories the key may read,
with their counts of facts and turns and their last activity, searched by a part of the id
and paged as RAGFlow pages its lists."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from recallery.api.deps import Actor, EngineDep
from recallery.requests.subjects import SubjectKind
from recallery.web.edge import params
from recallery.wire.envelope import envelope
from recallery.wire.people import people_page_dict

router = APIRouter(tags=["subjects"])

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


@router.get(
    "/people",
    summary="The end users, agents or sessions of the memories the key may read, with "
    "their counts of facts and turns and their last activity, newest first",
)
def people(
    engine: EngineDep,
    actor: Actor,
    kind: Kind = None,
    keywords: Keywords = None,
    page: params.Page = None,
    page_size: params.Size = None,
) -> Any:
    found = engine.people(
        actor,
        "user" if kind is None else kind,
        keywords=keywords,
        page=params.page(page),
        page_size=params.size(page_size, params.FALLBACK_SIZE),
    )
    return envelope(people_page_dict(found))

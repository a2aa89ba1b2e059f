"""Curation routes: bulk changes with a dry run, the review queue, the Facts listing and
entries over time."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from pydantic import ConfigDict, Field

from recallery import validation as v
from recallery import wire
from recallery.api.deps import Actor, EngineDep
from recallery.errors import InvalidInput
from recallery.requests import MAX_BUCKETS, Bucket, BulkAction, TimelineClock
from recallery.services.curation import MAX_BULK_IDS
from recallery.web.edge import declared, params
from recallery.web.edge import schemas as S
from recallery.web.edge.bodies import REQUIRED_BODY, Lenient
from recallery.wire import curation

router = APIRouter(tags=["curation"])

Text = params.Free

_FILTER = {
    "type": "object",
    "properties": {
        "agent_id": S.nullable(
            {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
        ),
        "keywords": S.nullable(S.TEXT),
        "session_id": S.nullable(S.TEXT),
        "user_id": S.nullable(S.TEXT),
        "message_type": S.nullable({"anyOf": [S.ENTRY_TYPES, S.listed(S.ENTRY_TYPE["enum"])]}),
        "status": S.nullable(S.BOOLEAN),
        "trust": S.nullable(
            {"anyOf": [{"type": "array", "items": S.TRUST}, S.listed(S.TRUST["enum"])]}
        ),
        "forgotten": S.nullable(S.BOOLEAN),
    },
    "additionalProperties": False,
}


def _field(schema: dict[str, Any], description: str) -> Any:
    return Field(None, description=description, json_schema_extra=schema)


class Bulk(Lenient):
    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "required": ["action"],
            "oneOf": [  # message_ids or a filter, not both
                {"required": ["message_ids"], "properties": {"message_ids": {"type": "array"}}},
                {"required": ["filter"], "properties": {"filter": {"type": "object"}}},
            ],
        },
    )

    action: Any = _field(
        {"enum": [a.value for a in BulkAction]}, "What to do to each selected entry."
    )
    message_ids: Any = _field(
        S.nullable(
            {
                "type": "array",
                "items": S.MESSAGE_ID,
                "minItems": 1,
                "maxItems": MAX_BULK_IDS,
            }
        ),
        "The entries to change (or a filter).",
    )
    filter: Any = _field(
        S.nullable(_FILTER),
        "Every raw turn these Messages filters select (or message_ids); `{}` selects all.",
    )
    dry_run: Any = _field(
        S.nullable(S.BOOLEAN), "Say what would change, change nothing (default true)."
    )
    token: Any = _field(
        S.nullable(S.TOKEN),
        "The dry run's token: apply exactly what it reported, or nothing (409).",
    )
    reason: Any = _field(S.nullable(S.TEXT), "Why, for the audit log (confirm, reject, erase).")


@router.post(
    "/memories/{memory_id}/bulk",
    summary="Change many entries at once (a dry run by default)",
    openapi_extra=REQUIRED_BODY,
)
def bulk(
    engine: EngineDep, actor: Actor, memory_id: params.MemoryId, body: Bulk | None = None
) -> Any:
    fields = body or Bulk()
    fields.require("action")
    selected = None
    if fields.filter is not None:
        selected = curation.message_filter_from_dict(fields.filter)
    ids = fields.message_ids
    if ids is not None and not isinstance(ids, list):
        raise InvalidInput("message_ids", "message_ids must be a list of message ids.")
    reason = "" if fields.reason is None else v.text(fields.reason, "reason", limit=1024)
    if fields.token is not None and not isinstance(fields.token, str):
        raise InvalidInput("token", "token must be the token of a bulk change's dry run.")
    result = engine.bulk(
        actor,
        params.path_memory_id(memory_id),
        fields.action,
        message_ids=ids,
        filter=selected,
        dry_run=True if fields.dry_run is None else fields.dry_run,
        reason=reason,
        token=fields.token,
    )
    return wire.envelope(curation.bulk_result_dict(result))


@router.get(
    "/memories/{memory_id}/review",
    summary="Extracted entries waiting for review, oldest first, with their source turns",
)
def review_queue(
    engine: EngineDep,
    actor: Actor,
    memory_id: params.MemoryId,
    filters: Annotated[dict[str, Any], Depends(declared.review_parameters)],
    page: params.Page = None,
    page_size: params.Size = None,
) -> Any:
    found = engine.review_queue(
        actor,
        params.path_memory_id(memory_id),
        declared.review_filter(filters),
        page=params.page(page),
        page_size=params.size(page_size, params.FALLBACK_SIZE),
    )
    return wire.envelope(curation.review_page_dict(found))


@router.get(
    "/memories/{memory_id}/facts",
    summary="The memory's current facts (extracted entries), newest first by valid time, with "
    "what became of the facts the filters select",
)
def facts(
    engine: EngineDep,
    actor: Actor,
    memory_id: params.MemoryId,
    filters: Annotated[dict[str, Any], Depends(declared.fact_parameters)],
    page: params.Page = None,
    page_size: params.Size = None,
) -> Any:
    found = engine.facts(
        actor,
        params.path_memory_id(memory_id),
        declared.fact_filter(filters),
        page=params.page(page),
        page_size=params.size(page_size, params.FALLBACK_SIZE),
    )
    return wire.envelope(curation.fact_page_dict(found))


@router.get(
    "/memories/{memory_id}/timeline",
    summary="Entries the memory holds per type, by the hour, day or week they were recorded "
    "or became valid",
)
def timeline(
    engine: EngineDep,
    actor: Actor,
    memory_id: params.MemoryId,
    bucket: Annotated[str | None, params.query({"enum": ["", *(b.value for b in Bucket)]})] = None,
    buckets: Annotated[
        str | None,
        params.query({"type": "integer", "minimum": 1, "maximum": MAX_BUCKETS}),
    ] = None,
    clock: Annotated[
        str | None,
        params.query(
            {"enum": ["", *(c.value for c in TimelineClock)]},
            "recorded (default): when entries were recorded; valid: when they hold (a turn's "
            "conversation time).",
        ),
    ] = None,
) -> Any:
    count = 30 if buckets is None else _integer(buckets, "buckets")
    found = engine.timeline(
        actor,
        params.path_memory_id(memory_id),
        bucket=bucket or "day",
        buckets=count,
        clock=clock or "recorded",
    )
    return wire.envelope(curation.timeline_dict(found))


def _integer(value: str, field: str) -> int:
    if not (value.isascii() and value.strip().isdigit()):
        raise InvalidInput(field, f"{field} must be an integer.")
    return int(value)

"""Routes for agents: entries they state directly, reconciled with what a memory holds, and
the extraction job (task status) of one turn."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import ConfigDict, Field

from recallery import wire
from recallery.api.deps import Actor, EngineDep
from recallery.web.edge import params
from recallery.web.edge import schemas as S
from recallery.web.edge.bodies import REQUIRED_BODY, Lenient
from recallery.wire.statements import added_dict

router = APIRouter(tags=["agents"])

_ENTRY_ITEM: dict[str, Any] = {
    "type": "array",
    "minItems": 1,
    "maxItems": 100,
    "items": {
        "type": "object",
        "properties": {
            "content": S.NON_BLANK,
            "message_type": {"enum": ["semantic", "episodic", "procedural"]},
            "valid_at": S.nullable(S.TIME),
            "invalid_at": S.nullable(S.TIME),
        },
        "required": ["content"],
        "additionalProperties": False,
    },
}
_TEXT: dict[str, Any] = S.nullable(S.TEXT)


def _field(schema: dict[str, Any], description: str) -> Any:
    return Field(None, description=description, json_schema_extra=schema)


class StatedEntries(Lenient):
    model_config = ConfigDict(extra="allow", json_schema_extra={"required": ["entries"]})

    entries: Any = _field(
        _ENTRY_ITEM,
        "1 to 100 entries: content, message_type (default semantic; one the memory keeps), "
        "valid_at (default now), invalid_at (default open).",
    )
    user_id: Any = _field(_TEXT, "The end user the entries are about.")
    agent_id: Any = _field(_TEXT, "The agent stating them.")
    session_id: Any = _field(_TEXT, "The conversation.")
    source_id: Any = _field(
        S.nullable(S.MESSAGE_ID), "A raw turn of the memory they come from (their evidence)."
    )


@router.post(
    "/memories/{memory_id}/entries",
    summary="State typed entries directly (reconciled: repeats, contradictions, rejections)",
    openapi_extra=REQUIRED_BODY,
)
def add_entries(
    engine: EngineDep, actor: Actor, memory_id: params.MemoryId, body: StatedEntries | None = None
) -> Any:
    fields = body or StatedEntries()
    fields.require("entries")
    added = engine.add_entries(
        actor,
        params.path_memory_id(memory_id),
        fields.entries,
        user_id=fields.user_id or "",
        agent_id=fields.agent_id or "",
        session_id=fields.session_id or "",
        source_id=fields.source_id,
    )
    return wire.envelope(added_dict(added))


@router.get(
    "/messages/{memory_id}:{message_id}/task",
    summary="The extraction job of a turn (null when the memory extracts nothing)",
)
def task_status(
    engine: EngineDep, actor: Actor, memory_id: params.MemoryId, message_id: params.MessageId
) -> Any:
    job = engine.task_status(actor, params.path_memory_id(memory_id), message_id)
    return wire.envelope(None if job is None else wire.job_dict(job))

"""Routes for agents: entries they state directly, reconciled with what a memory holds, and
the extraction job (task status) of one turn."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import Field

from memstrata import wire
from memstrata.api import params
from memstrata.api.bodies import Lenient
from memstrata.api.deps import Actor, EngineDep
from memstrata.wire.statements import added_dict

router = APIRouter(tags=["agents"])

_ENTRY_ITEM: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "content": {"type": "string"},
            "message_type": {"enum": ["semantic", "episodic", "procedural"]},
            "valid_at": {"type": "string", "format": "date-time"},
            "invalid_at": {"type": "string", "format": "date-time"},
        },
        "required": ["content"],
    },
}
_TEXT: dict[str, Any] = {"type": "string"}


def _field(schema: dict[str, Any], description: str) -> Any:
    return Field(None, description=description, json_schema_extra=schema)


class StatedEntries(Lenient):
    entries: Any = _field(
        _ENTRY_ITEM,
        "1 to 100 entries: content, message_type (default semantic; one the memory keeps), "
        "valid_at (default now), invalid_at (default open).",
    )
    user_id: Any = _field(_TEXT, "The end user the entries are about.")
    agent_id: Any = _field(_TEXT, "The agent stating them.")
    session_id: Any = _field(_TEXT, "The conversation.")
    source_id: Any = _field(
        {"type": "integer"}, "A raw turn of the memory they come from (their evidence)."
    )


@router.post(
    "/memories/{memory_id}/entries",
    summary="State typed entries directly (reconciled: repeats, contradictions, rejections)",
)
def add_entries(
    engine: EngineDep, actor: Actor, memory_id: str, body: StatedEntries | None = None
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
def task_status(engine: EngineDep, actor: Actor, memory_id: str, message_id: str) -> Any:
    job = engine.task_status(actor, params.path_memory_id(memory_id), message_id)
    return wire.envelope(None if job is None else wire.job_dict(job))

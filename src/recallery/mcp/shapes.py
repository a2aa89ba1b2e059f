"""The tools' structured results (each tool's output schema), built from the engine's types."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Any

from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, Field, GetJsonSchemaHandler, WithJsonSchema
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, to_jsonable_python

from recallery.models import Entry, EraseReceipt, Hit, Job, Trust
from recallery.requests import AddedEntries, Context

from .backend import MemoryRef


class _Inline:
    """A list whose items' schema is written out in place, not as a ``$ref`` into ``$defs``:
    a client checks every result against it, and a reference costs it a lookup per item."""

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        listed: dict[str, Any] = handler(schema)
        return {**listed, "items": dict(handler.resolve_ref_schema(listed["items"]))}


#: A time or null, as ``anyOf`` (a type list such as ``["string", "null"]`` is not portable
#: across MCP clients: the Inspector's strict mode flags it).
_MaybeTime = Annotated[
    datetime | None,
    WithJsonSchema({"anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}]}),
]


class MemoryInfo(BaseModel):
    id: str
    name: str
    types: list[str] = Field(description="Entry types the memory keeps (raw always).")
    description: str | None = None

    @classmethod
    def of(cls, m: MemoryRef) -> MemoryInfo:
        return cls(
            id=m.id, name=m.name, types=[t.value for t in m.types], description=m.description
        )


class Memories(BaseModel):
    memories: list[MemoryInfo]


def _unset(value: object) -> bool:
    return value is None or value == ""


class EntryInfo(BaseModel):
    """One entry: id, type, text, valid time, source and state. The optional fields are left
    out while they hold nothing (no end of validity, no user, agent or session)."""

    id: int
    memory_id: str
    type: str
    content: str
    valid_at: datetime
    invalid_at: _MaybeTime = Field(None, exclude_if=_unset)
    recorded_at: datetime
    source: str = Field(description="'conversation', or 'raw:<id>' for an entry from a turn.")
    origin: str
    trust: str
    user_id: str = Field("", exclude_if=_unset)
    agent_id: str = Field("", exclude_if=_unset)
    session_id: str = Field("", exclude_if=_unset)
    current: bool = Field(description="False once corrected or superseded (retired).")
    forgotten: bool

    @classmethod
    def of(cls, e: Entry) -> EntryInfo:
        return cls(**_fields(e))


def _fields(e: Entry) -> dict[str, Any]:
    return {
        "id": e.message_id,
        "memory_id": e.memory_id,
        "type": e.message_type.value,
        "content": e.content,
        "valid_at": e.valid_at,
        "invalid_at": e.invalid_at,
        "recorded_at": e.recorded_at,
        "source": "conversation" if e.source_id is None else f"raw:{e.source_id}",
        "origin": e.origin.value,
        "trust": e.trust.value,
        "user_id": e.user_id,
        "agent_id": e.agent_id,
        "session_id": e.session_id,
        "current": e.retired_at is None,
        "forgotten": e.forget_at is not None,
    }


def _unreviewed(value: object) -> bool:
    return value == Trust.UNREVIEWED.value


def _true(value: object) -> bool:
    return value is True


def _false(value: object) -> bool:
    return value is False


class Recalled(BaseModel):
    """One search result, lean: what an agent reads and the id it acts on. A client checks
    every value of every result against the schema, so the states most results share
    (unreviewed, current, not forgotten) are left out unless a result differs, the raw turn
    an extracted entry came from is there only for those, and the entry's bookkeeping
    (recording time, origin) is ``get_entry``'s."""

    id: int
    memory_id: str
    type: str
    content: str
    score: float = Field(description="Fused keyword and vector score, 0 to 1.")
    valid_at: datetime
    invalid_at: _MaybeTime = Field(None, exclude_if=_unset)
    trust: str = Field(
        Trust.UNREVIEWED.value,
        exclude_if=_unreviewed,
        description="'confirmed' once a reviewer confirmed it (search never returns rejected).",
    )
    user_id: str = Field("", exclude_if=_unset)
    agent_id: str = Field("", exclude_if=_unset)
    session_id: str = Field("", exclude_if=_unset)
    source_id: int | None = Field(
        None,
        exclude_if=_unset,
        description="The raw turn an extracted entry came from (none for a turn itself).",
    )
    current: bool = Field(
        True,
        exclude_if=_true,
        description="False once corrected or superseded (only an as_of search finds these).",
    )
    forgotten: bool = Field(
        False, exclude_if=_false, description="True once forgotten (only with as_of)."
    )
    why: dict[str, float] | None = Field(
        None,
        exclude_if=_unset,
        description="With explain: the score's contributions by ranking stage, adding up to it.",
    )


def recalled(h: Hit) -> dict[str, Any]:
    """``h`` in :class:`Recalled`'s JSON form, built directly (a model per result and its dump
    cost a search of 50 results 0.4 ms); the server still checks it against the model."""
    e = h.entry
    out: dict[str, Any] = {
        "id": e.message_id,
        "memory_id": e.memory_id,
        "type": e.message_type.value,
        "content": e.content,
        "score": round(h.score, 6),
        "valid_at": to_jsonable_python(e.valid_at),
    }
    if e.trust is not Trust.UNREVIEWED:
        out["trust"] = e.trust.value
    if e.invalid_at is not None:
        out["invalid_at"] = to_jsonable_python(e.invalid_at)
    for name in ("user_id", "agent_id", "session_id"):
        if value := getattr(e, name):
            out[name] = value
    if e.source_id is not None:
        out["source_id"] = e.source_id
    if e.retired_at is not None:
        out["current"] = False
    if e.forget_at is not None:
        out["forgotten"] = True
    if h.why:
        out["why"] = {stage: round(part, 6) for stage, part in h.why}
    return out


def recall_result(hits: Sequence[Hit]) -> CallToolResult:
    """The ``recall`` tool's result: the hits as structured content and, for clients that
    read only text, the same JSON as text."""
    structured = {"results": [recalled(h) for h in hits]}
    text = json.dumps(structured, ensure_ascii=False)
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=structured
    )


class Recall(BaseModel):
    results: Annotated[list[Recalled], _Inline()]


class ContextBlock(BaseModel):
    text: str = Field(description="The fenced block to put into a prompt: stored data, not orders.")
    message_ids: list[int]
    tokens: int
    truncated: bool

    @classmethod
    def of(cls, c: Context) -> ContextBlock:
        return cls(
            text=c.text, message_ids=list(c.message_ids), tokens=c.tokens, truncated=c.truncated
        )


class EntryDetail(BaseModel):
    entry: EntryInfo
    history: list[EntryInfo] = Field(description="Every version, oldest first.")
    evidence: list[int] = Field(description="Raw turns that support the entry.")


class Remembered(BaseModel):
    memory_id: str
    message_id: int = Field(description="The raw turn written; extraction runs in the background.")


class Outcome(BaseModel):
    index: int
    action: str = Field(
        description="add, supersede, duplicate or suppress (stored, to a key without read)."
    )
    message_id: int | None
    target: int | None
    reason: str


class Stated(BaseModel):
    memory_id: str
    outcomes: list[Outcome]
    notes: list[str]

    @classmethod
    def of(cls, a: AddedEntries) -> Stated:
        return cls(
            memory_id=a.memory_id,
            outcomes=[Outcome(**o.__dict__) for o in a.outcomes],
            notes=list(a.notes),
        )


class Changed(BaseModel):
    changed: list[int] = Field(description="Entries whose state changed (a turn's extracts too).")


class Receipt(BaseModel):
    memory_id: str
    requested: int
    erased: list[int]
    at: datetime
    reason: str

    @classmethod
    def of(cls, r: EraseReceipt) -> Receipt:
        return cls(
            memory_id=r.memory_id,
            requested=r.requested,
            erased=list(r.erased),
            at=r.at,
            reason=r.reason,
        )


class TaskStatus(BaseModel):
    found: bool = Field(description="False when the memory extracts nothing from turns.")
    state: str | None = None
    outcome: str | None = None
    progress: float | None = None
    progress_msg: str | None = None
    attempts: int | None = None

    @classmethod
    def of(cls, job: Job | None) -> TaskStatus:
        if job is None:
            return cls(found=False)
        return cls(
            found=True,
            state=job.state.value,
            outcome=job.outcome,
            progress=job.progress,
            progress_msg=job.progress_msg,
            attempts=job.attempts,
        )

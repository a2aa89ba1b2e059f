"""The JSON shapes of memstrata's REST API, both ways, and its error codes.

One module owns the wire format so the server (``memstrata.api``), the Python SDK
(``memstrata.client``) and the JSONL export agree by construction. Shapes follow RAGFlow's
memory API (times as ``YYYY-MM-DD HH:MM:SS``, memory times in milliseconds); fields RAGFlow
does not have are added after its own. Everything here is pure: no FastAPI, no httpx.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from memstrata.errors import (
    CapacityExceeded,
    Conflict,
    Forbidden,
    InvalidInput,
    MemstrataError,
    ModelError,
    NotFound,
    StoreError,
    Unauthorized,
)
from memstrata.models import (
    ApiKey,
    AuditEvent,
    Entry,
    EntryType,
    EraseReceipt,
    ForgettingPolicy,
    Hit,
    Job,
    JobState,
    Memory,
    Origin,
    Permission,
    Trust,
    User,
)
from memstrata.retrieval.context import Context

Json = dict[str, Any]

TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
#: RAGFlow's success message for add-message.
ADD_MESSAGE_OK = "All add to task."
#: The message RAGFlow answers every authentication failure with.
UNAUTHORIZED_MESSAGE = "<Unauthorized '401: Unauthorized'>"

# --- errors ---------------------------------------------------------------------------------

SUCCESS = 0
EXCEPTION_ERROR = 100
ARGUMENT_ERROR = 101
DATA_ERROR = 102
UNAUTHORIZED = 401
FORBIDDEN = 403
NOT_FOUND = 404
CONFLICT = 409
SERVER_ERROR = 500


@dataclass(frozen=True)
class ErrorCode:
    """How one exception class travels: HTTP status and RAGFlow body code."""

    error: type[MemstrataError]
    status: int
    code: int


#: The one mapping between memstrata exceptions and the envelope, most specific first.
ERROR_CODES = (
    ErrorCode(InvalidInput, 400, ARGUMENT_ERROR),
    ErrorCode(Unauthorized, 401, UNAUTHORIZED),
    ErrorCode(Forbidden, 403, FORBIDDEN),
    ErrorCode(NotFound, 404, NOT_FOUND),
    ErrorCode(Conflict, 409, CONFLICT),
    ErrorCode(CapacityExceeded, 409, DATA_ERROR),
    ErrorCode(ModelError, 502, SERVER_ERROR),
    ErrorCode(StoreError, 500, SERVER_ERROR),
    ErrorCode(MemstrataError, 500, SERVER_ERROR),
)


def error_code(exc: MemstrataError) -> ErrorCode:
    return next(c for c in ERROR_CODES if isinstance(exc, c.error))


def error_envelope(exc: MemstrataError) -> tuple[int, Json]:
    """(HTTP status, body) for a memstrata exception."""
    found = error_code(exc)
    message = UNAUTHORIZED_MESSAGE if isinstance(exc, Unauthorized) else exc.message
    detail: Json = {"error": exc.code}
    if isinstance(exc, InvalidInput):
        detail["field"] = exc.field
    return found.status, failure(found.code, message, detail)


def envelope(data: object = None, message: object = True) -> Json:
    """A success: code 0, ``message`` true (or RAGFlow's text), and the data."""
    return {"code": SUCCESS, "message": message, "data": data}


def failure(code: int, message: object, data: object = None) -> Json:
    return {"code": code, "message": message, "data": data}


def error_from_envelope(body: Mapping[str, Any], status: int) -> MemstrataError:
    """The exception an error envelope stands for (the SDK raises it)."""
    detail = body.get("data") if isinstance(body.get("data"), dict) else {}
    assert isinstance(detail, dict)
    message = str(body.get("message", ""))
    kind = detail.get("error")
    by_kind = {c.error.code: c.error for c in ERROR_CODES}
    by_code = {c.code: c.error for c in reversed(ERROR_CODES)}
    cls = by_kind.get(kind) if isinstance(kind, str) else None
    cls = cls or by_code.get(body.get("code"), MemstrataError)  # type: ignore[arg-type]
    if status == 401:
        cls = Unauthorized
    if issubclass(cls, InvalidInput):
        return InvalidInput(str(detail.get("field", "")), message)
    return cls(message)


# --- times ----------------------------------------------------------------------------------


def stamp(value: datetime | None) -> str | None:
    """RAGFlow's ``YYYY-MM-DD HH:MM:SS`` (UTC), or None."""
    return None if value is None else value.astimezone(UTC).strftime(TIME_FORMAT)


def iso(value: datetime | None) -> str | None:
    """Full-precision ISO 8601 (for memstrata's own time fields, usable as ``as_of``)."""
    return None if value is None else value.astimezone(UTC).isoformat()


def millis(value: datetime | None) -> int | None:
    return None if value is None else int(value.timestamp() * 1000)


def parse_time(value: object) -> datetime | None:
    """Inverse of :func:`stamp`, :func:`iso` and :func:`millis`."""
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return datetime.fromtimestamp(value / 1000, UTC)
    text = str(value)
    parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _required_time(value: object) -> datetime:
    parsed = parse_time(value)
    if parsed is None:
        raise ValueError("a time is required")
    return parsed


# --- memories -------------------------------------------------------------------------------


def embd_name(embd_id: str) -> str:
    """Display name of an embedding model id (the part before ``@Provider``)."""
    return embd_id.rpartition("@")[0] or embd_id


def memory_dict(m: Memory, owner_name: str | None = None) -> Json:
    """A memory's full configuration (create, update, config routes)."""
    return {
        "id": m.id,
        "name": m.name,
        "avatar": m.avatar,
        "tenant_id": m.tenant_id,
        "owner_name": owner_name,
        "memory_type": [t.value for t in m.memory_types],
        "storage_type": m.storage_type,
        "embd_id": m.embd_id,
        "llm_id": m.llm_id,
        "permissions": m.permissions.value,
        "description": m.description,
        "memory_size": m.memory_size,
        "forgetting_policy": m.forgetting_policy.value,
        "temperature": m.temperature,
        "system_prompt": m.system_prompt,
        "user_prompt": m.user_prompt,
        "create_time": millis(m.created_at),
        "create_date": stamp(m.created_at),
        "update_time": millis(m.updated_at),
        "update_date": stamp(m.updated_at),
        "used_bytes": m.used_bytes,
        "entry_count": m.entry_count,
    }


def memory_from_dict(d: Mapping[str, Any]) -> Memory:
    return Memory(
        id=d["id"],
        tenant_id=d["tenant_id"],
        name=d["name"],
        memory_types=tuple(EntryType(t) for t in d["memory_type"]),
        embd_id=d["embd_id"],
        llm_id=d["llm_id"],
        permissions=Permission(d["permissions"]),
        memory_size=int(d["memory_size"]),
        forgetting_policy=ForgettingPolicy(d["forgetting_policy"]),
        temperature=float(d["temperature"]),
        system_prompt=d.get("system_prompt"),
        user_prompt=d.get("user_prompt"),
        avatar=d.get("avatar"),
        description=d.get("description"),
        storage_type=d.get("storage_type", "table"),
        created_at=parse_time(d.get("create_time")),
        updated_at=parse_time(d.get("update_time")),
        used_bytes=int(d.get("used_bytes", 0)),
        entry_count=int(d.get("entry_count", 0)),
    )


@dataclass(frozen=True)
class MemorySummary:
    """A memory as the list route shows it (RAGFlow's list items carry no sizes or prompts)."""

    id: str
    name: str
    tenant_id: str
    owner_name: str | None
    memory_types: tuple[EntryType, ...]
    storage_type: str
    embd_id: str
    embd_name: str
    llm_id: str
    permissions: Permission
    avatar: str | None
    description: str | None
    created_at: datetime | None


def memory_item_dict(m: Memory, owner_name: str | None) -> Json:
    return {
        "id": m.id,
        "name": m.name,
        "avatar": m.avatar,
        "tenant_id": m.tenant_id,
        "owner_name": owner_name,
        "memory_type": [t.value for t in m.memory_types],
        "storage_type": m.storage_type,
        "embd_id": m.embd_id,
        "llm_id": m.llm_id,
        "embd_name": embd_name(m.embd_id),
        "permissions": m.permissions.value,
        "description": m.description,
        "create_time": millis(m.created_at),
        "create_date": stamp(m.created_at),
    }


def memory_item_from_dict(d: Mapping[str, Any]) -> MemorySummary:
    return MemorySummary(
        id=d["id"],
        name=d["name"],
        tenant_id=d["tenant_id"],
        owner_name=d.get("owner_name"),
        memory_types=tuple(EntryType(t) for t in d["memory_type"]),
        storage_type=d["storage_type"],
        embd_id=d["embd_id"],
        embd_name=d["embd_name"],
        llm_id=d["llm_id"],
        permissions=Permission(d["permissions"]),
        avatar=d.get("avatar"),
        description=d.get("description"),
        created_at=parse_time(d.get("create_time")),
    )


# --- entries --------------------------------------------------------------------------------


def entry_dict(e: Entry) -> Json:
    """A message as RAGFlow shows it, then memstrata's own fields."""
    return {
        "message_id": e.message_id,
        "message_type": e.message_type.value,
        "source_id": e.source_id,
        "memory_id": e.memory_id,
        "user_id": e.user_id,
        "agent_id": e.agent_id,
        "session_id": e.session_id,
        "valid_at": stamp(e.valid_at),
        "invalid_at": stamp(e.invalid_at),
        "forget_at": stamp(e.forget_at),
        "status": e.status,
        "content": e.content,
        "tenant_id": e.tenant_id,
        "trust": e.trust.value,
        "origin": e.origin.value,
        "recorded_at": iso(e.recorded_at),
        "retired_at": iso(e.retired_at),
        "supersedes": e.supersedes,
        "superseded_by": e.superseded_by,
        "last_used_at": iso(e.last_used_at),
        "use_count": e.use_count,
        "size_bytes": e.size_bytes,
    }


def entry_from_dict(d: Mapping[str, Any]) -> Entry:
    return Entry(
        message_id=int(d["message_id"]),
        memory_id=d["memory_id"],
        tenant_id=d.get("tenant_id", ""),
        message_type=EntryType(d["message_type"]),
        content=d.get("content", ""),
        valid_at=_required_time(d["valid_at"]),
        recorded_at=_required_time(d.get("recorded_at") or d["valid_at"]),
        user_id=d.get("user_id") or "",
        agent_id=d.get("agent_id") or "",
        session_id=d.get("session_id") or "",
        source_id=d.get("source_id"),
        invalid_at=parse_time(d.get("invalid_at")),
        retired_at=parse_time(d.get("retired_at")),
        supersedes=d.get("supersedes"),
        superseded_by=d.get("superseded_by"),
        status=bool(d.get("status", True)),
        trust=Trust(d.get("trust", Trust.UNREVIEWED.value)),
        origin=Origin(d.get("origin", Origin.CONVERSATION.value)),
        forget_at=parse_time(d.get("forget_at")),
        last_used_at=parse_time(d.get("last_used_at")),
        use_count=int(d.get("use_count", 0)),
        size_bytes=int(d.get("size_bytes", 0)),
    )


def hit_dict(h: Hit) -> Json:
    return {
        **entry_dict(h.entry),
        "score": h.score,
        "keyword_score": h.keyword_score,
        "vector_score": h.vector_score,
    }


def hit_from_dict(d: Mapping[str, Any]) -> Hit:
    return Hit(
        entry_from_dict(d),
        float(d["score"]),
        float(d.get("keyword_score", 0.0)),
        float(d.get("vector_score", 0.0)),
    )


def agent_name(e: Entry) -> str:
    """RAGFlow shows the agent's canvas title; memstrata has no canvases, so the agent id."""
    return e.agent_id or "Unknown"


def message_row_dict(raw: Entry, extracted: Sequence[Entry], job: Job | None) -> Json:
    """One row of a memory's message list: a raw turn, its extracts and its extraction task."""
    return {
        **entry_dict(raw),
        "agent_name": agent_name(raw),
        "extract": [{**entry_dict(x), "agent_name": agent_name(x)} for x in extracted],
        "task": {} if job is None else job_dict(job),
    }


def content_dict(e: Entry, vector: list[float] | None) -> Json:
    """The content route: every field, the vector, and RAGFlow's document id and zone."""
    return {
        **entry_dict(e),
        "content_embed": vector,
        "id": f"{e.memory_id}_{e.message_id}",
        "zone_id": 0,
    }


# --- jobs -----------------------------------------------------------------------------------


def job_dict(j: Job) -> Json:
    """A job, shaped as RAGFlow's task row (``doc_id``, ``digest``...) plus its own fields."""
    return {
        "id": j.id,
        "doc_id": j.memory_id,
        "from_page": 0,
        "progress": j.progress,
        "progress_msg": j.progress_msg,
        "digest": "" if j.message_id is None else str(j.message_id),
        "chunk_ids": "",
        "create_time": millis(j.created_at),
        "kind": j.kind,
        "tenant_id": j.tenant_id,
        "memory_id": j.memory_id,
        "message_id": j.message_id,
        "state": j.state.value,
        "attempts": j.attempts,
        "outcome": j.outcome,
        "result": j.result,
        "update_time": millis(j.updated_at),
        "run_after": millis(j.run_after),
        "lease_until": millis(j.lease_until),
        "lease_owner": j.lease_owner,
    }


def job_from_dict(d: Mapping[str, Any]) -> Job:
    return Job(
        id=int(d["id"]),
        kind=d["kind"],
        tenant_id=d["tenant_id"],
        memory_id=d["memory_id"],
        message_id=d.get("message_id"),
        state=JobState(d["state"]),
        attempts=int(d["attempts"]),
        progress=float(d["progress"]),
        progress_msg=d["progress_msg"],
        outcome=d.get("outcome"),
        created_at=_required_time(d["create_time"]),
        updated_at=_required_time(d["update_time"]),
        run_after=parse_time(d.get("run_after")),
        lease_until=parse_time(d.get("lease_until")),
        lease_owner=d.get("lease_owner"),
        result=dict(d.get("result") or {}),
    )


# --- audit, erasure, context ----------------------------------------------------------------


def audit_dict(a: AuditEvent) -> Json:
    return {
        "id": a.id,
        "at": iso(a.at),
        "actor": a.actor,
        "action": a.action,
        "memory_id": a.memory_id,
        "message_id": a.message_id,
        "reason": a.reason,
        "before": a.before,
        "after": a.after,
    }


def audit_from_dict(d: Mapping[str, Any]) -> AuditEvent:
    return AuditEvent(
        id=int(d["id"]),
        at=_required_time(d["at"]),
        actor=d["actor"],
        action=d["action"],
        memory_id=d.get("memory_id"),
        message_id=d.get("message_id"),
        reason=d.get("reason", ""),
        before=dict(d.get("before") or {}),
        after=dict(d.get("after") or {}),
    )


def receipt_dict(r: EraseReceipt) -> Json:
    return {
        "memory_id": r.memory_id,
        "requested": r.requested,
        "erased": list(r.erased),
        "at": iso(r.at),
        "actor": r.actor,
        "reason": r.reason,
    }


def receipt_from_dict(d: Mapping[str, Any]) -> EraseReceipt:
    return EraseReceipt(
        memory_id=d["memory_id"],
        requested=int(d["requested"]),
        erased=tuple(int(i) for i in d["erased"]),
        at=_required_time(d["at"]),
        actor=d["actor"],
        reason=d["reason"],
    )


def context_dict(c: Context) -> Json:
    return {
        "text": c.text,
        "message_ids": list(c.message_ids),
        "tokens": c.tokens,
        "truncated": c.truncated,
    }


def context_from_dict(d: Mapping[str, Any]) -> Context:
    return Context(
        text=d["text"],
        message_ids=tuple(int(i) for i in d["message_ids"]),
        tokens=int(d["tokens"]),
        truncated=bool(d["truncated"]),
    )


# --- users and keys -------------------------------------------------------------------------


def user_dict(u: User) -> Json:
    return {"id": u.id, "name": u.name, "is_admin": u.is_admin, "created_at": iso(u.created_at)}


def user_from_dict(d: Mapping[str, Any]) -> User:
    return User(
        id=d["id"],
        name=d["name"],
        is_admin=bool(d["is_admin"]),
        created_at=_required_time(d["created_at"]),
    )


def key_dict(k: ApiKey) -> Json:
    return {
        "id": k.id,
        "user_id": k.user_id,
        "name": k.name,
        "scope": None if k.scope is None else list(k.scope),
        "created_at": iso(k.created_at),
        "revoked_at": iso(k.revoked_at),
    }


def key_from_dict(d: Mapping[str, Any]) -> ApiKey:
    scope = d.get("scope")
    return ApiKey(
        id=d["id"],
        user_id=d["user_id"],
        name=d.get("name", ""),
        scope=None if scope is None else tuple(scope),
        created_at=_required_time(d["created_at"]),
        revoked_at=parse_time(d.get("revoked_at")),
    )

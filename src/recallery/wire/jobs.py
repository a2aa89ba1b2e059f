"""A background job, shaped as RAGFlow's task row plus recallery's own fields."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recallery.models import Job, JobState
from recallery.requests.runs import ChatCheck, Retried
from recallery.wire.envelope import Json
from recallery.wire.times import millis, parse_time, required_time


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
        created_at=required_time(d["create_time"]),
        updated_at=required_time(d["update_time"]),
        run_after=parse_time(d.get("run_after")),
        lease_until=parse_time(d.get("lease_until")),
        lease_owner=d.get("lease_owner"),
        result=dict(d.get("result") or {}),
    )


def chat_check_dict(c: ChatCheck) -> Json:
    return {
        "llm_id": c.llm_id,
        "ok": c.ok,
        "answer": c.answer,
        "error": c.error,
        "latency_ms": c.latency_ms,
    }


def chat_check_from_dict(d: Mapping[str, Any]) -> ChatCheck:
    return ChatCheck(d["llm_id"], bool(d["ok"]), d["answer"], d["error"], float(d["latency_ms"]))


def retried_dict(r: Retried) -> Json:
    return {
        "memory_id": r.memory_id,
        "job_ids": list(r.job_ids),
        "message_ids": list(r.message_ids),
    }


def retried_from_dict(d: Mapping[str, Any]) -> Retried:
    return Retried(d["memory_id"], tuple(d["job_ids"]), tuple(d["message_ids"]))

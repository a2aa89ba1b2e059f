"""Entries both ways: a message as RAGFlow shows it, a search hit, an entry with its vector,
a context block and an erasure receipt."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from recallery.models import Entry, EntryType, EraseReceipt, Hit, Origin, Trust
from recallery.requests import Context
from recallery.wire.envelope import Json
from recallery.wire.times import iso, parse_time, required_time, stamp


def entry_dict(e: Entry) -> Json:
    """A message as RAGFlow shows it, then recallery's own fields."""
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
        valid_at=required_time(d["valid_at"]),
        recorded_at=required_time(d.get("recorded_at") or d["valid_at"]),
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
    """A hit; an explained one (``explain``) with ``why``: its score's contributions by
    ranking stage, in order, adding up to ``score``."""
    out = {
        **entry_dict(h.entry),
        "score": h.score,
        "keyword_score": h.keyword_score,
        "vector_score": h.vector_score,
    }
    if h.why:
        out["why"] = dict(h.why)
    return out


def hit_from_dict(d: Mapping[str, Any]) -> Hit:
    return Hit(
        entry_from_dict(d),
        float(d["score"]),
        float(d.get("keyword_score", 0.0)),
        float(d.get("vector_score", 0.0)),
        tuple((str(k), float(v)) for k, v in (d.get("why") or {}).items()),
    )


def content_dict(e: Entry, vector: list[float] | None) -> Json:
    """The content route: every field, the vector, and RAGFlow's document id and zone."""
    return {
        **entry_dict(e),
        "content_embed": vector,
        "id": f"{e.memory_id}_{e.message_id}",
        "zone_id": 0,
    }


def content_from_dict(d: Mapping[str, Any]) -> tuple[Entry, NDArray[np.float32] | None]:
    embed = d.get("content_embed")
    return entry_from_dict(d), None if embed is None else np.asarray(embed, dtype=np.float32)


def receipt_dict(r: EraseReceipt) -> Json:
    return {
        "memory_id": r.memory_id,
        "requested": r.requested,
        "erased": list(r.erased),
        "at": iso(r.at),
        "actor": r.actor,
        "reason": r.reason,
        "scrubbed": r.scrubbed,
    }


def receipt_from_dict(d: Mapping[str, Any]) -> EraseReceipt:
    return EraseReceipt(
        memory_id=d["memory_id"],
        requested=int(d["requested"]),
        erased=tuple(int(i) for i in d["erased"]),
        at=required_time(d["at"]),
        actor=d["actor"],
        reason=d["reason"],
        scrubbed=bool(d.get("scrubbed", True)),
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

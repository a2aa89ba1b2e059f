"""Helpers for tests that drive the engine directly: write a turn, write an extracted entry
under it as the extraction worker would, see which ids a search finds, count a memory's audit
actions, and an embedder whose query embedding fails. Shared by the engine, store, retrieval
and web tests."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from recallery import Engine, Entry, EntryType, Memory, ModelError, Origin, Principal, SearchRequest
from recallery.models import NewEntry
from recallery.testing import DeterministicEmbedder


def turn(engine: Engine, actor: Principal, memory: Memory, text: str, **kw: object) -> Entry:
    (entry,) = engine.add_turn(actor, [memory.id], user_input=text, agent_response="ok", **kw)
    return entry


def found(engine: Engine, actor: Principal, memory: Memory, query: str, **kw: object) -> set[int]:
    request = SearchRequest(query, (memory.id,), top_n=20, similarity_threshold=0.0, **kw)  # type: ignore[arg-type]
    return {h.entry.message_id for h in engine.search(actor, request)}


def extracted(engine: Engine, raw: Entry, content: str, **kw: object) -> int:
    """Write an extracted entry straight through the store, as the extraction worker does."""
    vector = engine.models.embedder("x@Builtin").embed([content])
    values: dict[str, object] = {
        "memory_id": raw.memory_id,
        "tenant_id": raw.tenant_id,
        "message_type": EntryType.SEMANTIC,
        "content": content,
        "valid_at": raw.valid_at,
        "size_bytes": 100,
        "source_id": raw.message_id,
        "origin": Origin.EXTRACTION,
        "user_id": raw.user_id,
        "agent_id": raw.agent_id,
        "session_id": raw.session_id,
    }
    values.update(kw)
    with engine.store.write() as w:
        (i,) = w.insert_entries([NewEntry(**values)], vector, engine.clock.now())  # type: ignore[arg-type]
    return i


def extract(engine: Engine, raw: Entry, content: str, kind: EntryType = EntryType.SEMANTIC) -> int:
    """An extracted entry of type ``kind`` under ``raw``, written as the extraction worker
    writes it; unlike :func:`extracted` it leaves the turn's user, agent and session unset."""
    vector = engine.models.embedder("x@Builtin").embed([content])
    new = NewEntry(
        memory_id=raw.memory_id,
        tenant_id=raw.tenant_id,
        message_type=kind,
        content=content,
        valid_at=raw.valid_at,
        size_bytes=100,
        source_id=raw.message_id,
        origin=Origin.EXTRACTION,
    )
    with engine.store.write() as w:
        (i,) = w.insert_entries([new], vector, engine.clock.now())
    return i


def actions(engine: Engine, actor: Principal, memory: Memory) -> Counter[str]:
    """How many audit events of each action ``memory`` has."""
    return Counter(e.action for e in engine.audit_log(actor, memory_id=memory.id).items)


class QueryFails(DeterministicEmbedder):
    """The deterministic embedder, except that embedding the query ``boom`` fails."""

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        if list(texts) == ["boom"]:
            raise ModelError("the model is down")
        return super().embed(texts)

"""What every area of the conformance suite shares: a fixed clock, small vectors, memory
and entry builders, and the seeding and search helpers of :class:`Conformance`."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import numpy as np
from numpy.typing import NDArray

from recallery.models import EntryType, Memory, NewEntry, Scope
from recallery.store.base import Store
from recallery.store.filters import EntryFilter

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
DIM = 8

#: (content, vector, NewEntry overrides) of one entry to seed.
Seed = tuple[str, Any, dict[str, Any]]


def unit(*components: float) -> NDArray[np.float32]:
    v = np.zeros(DIM, dtype=np.float32)
    v[: len(components)] = components
    return (v / np.linalg.norm(v)).astype(np.float32)


def make_memory(tenant: str = "tenant-a", **kw: Any) -> Memory:
    values: dict[str, Any] = {
        "id": uuid.uuid4().hex,
        "tenant_id": tenant,
        "name": f"memory-{uuid.uuid4().hex[:6]}",
        "memory_types": (EntryType.RAW, EntryType.SEMANTIC),
        "embd_id": "test@Builtin",
        "llm_id": "chat@None",
        "created_at": T0,
        "updated_at": T0,
    }
    values.update(kw)
    return Memory(**values)


def new_entry(memory: Memory, content: str, **kw: Any) -> NewEntry:
    values: dict[str, Any] = {
        "memory_id": memory.id,
        "tenant_id": memory.tenant_id,
        "message_type": EntryType.RAW,
        "content": content,
        "valid_at": T0,
        "size_bytes": len(content.encode()) + 4 * DIM,
    }
    values.update(kw)
    return NewEntry(**values)


class Conformance:
    """Helpers of every area's tests. Needs a ``store`` fixture."""

    def seed(self, store: Store, memory: Memory, rows: list[Seed], at: datetime = T0) -> list[int]:
        """Insert (content, vector, NewEntry overrides) rows; returns their ids."""
        with store.write() as w:
            if w.memory(memory.id) is None:
                w.insert_memory(memory)
            entries = [new_entry(memory, c, **kw) for c, _, kw in rows]
            vectors = np.stack([v for _, v, _ in rows]).astype(np.float32)
            return w.insert_entries(entries, vectors, at)

    def search_ids(
        self, store: Store, memory: Memory, f: EntryFilter, text: str, vector: NDArray[np.float32]
    ) -> tuple[set[int], set[int]]:
        scope = Scope.of(memory.id)
        with store.read() as r:
            kw = {i for i, _ in r.keyword_candidates(scope, text, f, 100)}
            vec = {i for i, _ in r.vector_candidates(scope, vector, f, 100)}
        return kw, vec

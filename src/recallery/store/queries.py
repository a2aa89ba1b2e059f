"""The typed questions a store answers and the small answers that are not models.

Callers build these (a listing of memories, an audit search) and readers turn them into SQL;
:data:`Passing` is the filter check a reader hands a backend's search legs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime

#: Which of the given message ids pass the search's scope and filter (built once per search
#: by the reader; a backend that ranks outside SQL checks its candidates with it).
Passing = Callable[[Iterable[int]], set[int]]


def remembering(passing: Passing, known: dict[int, bool] | None = None) -> Passing:
    """``passing`` asked only about ids it was not asked about before (answers kept in
    ``known``): for one read snapshot, where rows cannot change between the questions."""
    seen: dict[int, bool] = {} if known is None else known

    def check(ids: Iterable[int]) -> set[int]:
        asked = list(ids)
        fresh = [i for i in asked if i not in seen]
        if fresh:
            allowed = passing(fresh)
            seen.update((i, i in allowed) for i in fresh)
        return {i for i in asked if seen[i]}

    return check


@dataclass(frozen=True)
class MemoryQuery:
    """Which memories to list; ``user_id`` and ``tenant_ids`` are the caller and its tenants."""

    user_id: str
    tenant_ids: frozenset[str]
    keywords: str | None = None
    type_flags: int | None = None
    storage_type: str | None = None
    owner_ids: frozenset[str] | None = None
    ids: frozenset[str] | None = None
    limit: int = 30
    offset: int = 0


@dataclass(frozen=True)
class AuditQuery:
    """Which audit events to list, newest first; ``None`` leaves a field unfiltered."""

    memory_ids: frozenset[str] | None = None
    message_id: int | None = None
    actor: str | None = None
    action: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    limit: int = 100
    offset: int = 0


@dataclass(frozen=True)
class EvictionCandidate:
    """An entry in eviction order: its size, and whether it was forgotten already."""

    message_id: int
    size_bytes: int
    forgotten: bool

"""Capacity: what a write costs and which entries make room for it. Pure functions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from recallery.errors import CapacityExceeded
from recallery.store.queries import EvictionCandidate

#: Bytes per vector component (float32).
VECTOR_COMPONENT_BYTES = 4


def entry_size(content: str, dimension: int) -> int:
    """Bytes an entry really occupies: UTF-8 content plus its float32 vector."""
    return len(content.encode("utf-8")) + VECTOR_COMPONENT_BYTES * dimension


def need_bytes(contents: Sequence[str], dimension: int, budget: int) -> int:
    """Bytes ``contents`` will occupy as entries; CapacityExceeded when that alone is over
    ``budget`` (known before anything is embedded, so a hopeless write costs no model time)."""
    incoming = sum(entry_size(c, dimension) for c in contents)
    _within_budget(incoming, budget)
    return incoming


def _within_budget(incoming: int, budget: int) -> None:
    """CapacityExceeded when a write is larger than the whole budget (no eviction helps)."""
    if incoming > budget:
        raise CapacityExceeded(
            f"The write needs {incoming} bytes but the memory's budget is {budget} bytes."
        )


@dataclass(frozen=True)
class EvictionPlan:
    evict: tuple[int, ...]
    freed: int


def plan_eviction(
    *,
    budget: int,
    used: int,
    incoming: int,
    candidates: Sequence[EvictionCandidate],
    protected: frozenset[int] = frozenset(),
) -> EvictionPlan:
    """Choose the shortest prefix of ``candidates`` (already in policy order) that makes room.

    Raises :class:`CapacityExceeded` when the write cannot fit even after evicting every
    candidate, so a write never lands over budget.
    """
    _within_budget(incoming, budget)
    excess = used + incoming - budget
    if excess <= 0:
        return EvictionPlan((), 0)
    chosen: list[int] = []
    freed = 0
    for c in candidates:
        if c.message_id in protected:
            continue
        chosen.append(c.message_id)
        freed += c.size_bytes
        if freed >= excess:
            return EvictionPlan(tuple(chosen), freed)
    raise CapacityExceeded(
        "Memory size reached limit and cannot decide which to delete: "
        f"{excess} bytes over budget, only {freed} bytes can be evicted."
    )

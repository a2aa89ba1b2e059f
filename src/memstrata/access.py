"""Who may do what: permission decisions as data with reasons.

The rule follows RAGFlow: the owner of a memory may do everything; when the memory's
permission is ``team``, members of the owner's team may use it too. An API key can be
scoped to listed memories. Changing permissions, deleting a memory and erasing stay with
the owner.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from memstrata.models import Memory, Permission, Principal, Scope


class Action(enum.StrEnum):
    READ = "read"
    WRITE = "write"
    CONFIGURE = "configure"
    REVIEW = "review"
    SHARE = "share"
    DELETE = "delete"
    ERASE = "erase"


OWNER_ONLY = frozenset({Action.SHARE, Action.DELETE, Action.ERASE})


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str

    def __bool__(self) -> bool:
        return self.allowed


def decide(actor: Principal, action: Action, memory: Memory) -> Decision:
    """Decide whether ``actor`` may do ``action`` on ``memory``, with the reason."""
    if actor.scope is not None and memory.id not in actor.scope:
        return Decision(False, "the API key is not scoped to this memory")
    if memory.tenant_id == actor.user_id:
        return Decision(True, "owner")
    if memory.permissions is not Permission.TEAM:
        return Decision(False, "the memory is private to its owner")
    if memory.tenant_id not in actor.tenant_ids:
        return Decision(False, "not a member of the owner's team")
    if action in OWNER_ONLY:
        return Decision(False, f"only the owner may {action.value}")
    return Decision(True, "team member")


def resolve(actor: Principal, action: Action, memories: Iterable[Memory]) -> Scope:
    """The scope of ``memories`` that ``actor`` may ``action``; the others are dropped."""
    return Scope(frozenset(m.id for m in memories if decide(actor, action, m)))

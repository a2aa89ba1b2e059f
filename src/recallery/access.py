"""Who may do what: permission decisions as data with reasons.

The rule follows RAGFlow: the owner of a memory may do everything; when the memory's
permission is ``team``, members of the owner's team may use it too. An API key can be
scoped to listed memories, and limited in what it may do (its capabilities: each action
needs one, :data:`NEEDS`). Changing permissions, deleting a memory and erasing stay with
the owner.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from recallery.errors import Forbidden, NotFound
from recallery.models import Capability, Memory, Permission, Principal, Scope


class Action(enum.StrEnum):
    READ = "read"
    WRITE = "write"
    CONFIGURE = "configure"
    REVIEW = "review"
    SHARE = "share"
    DELETE = "delete"
    ERASE = "erase"
    RESIZE = "change the byte budget or forgetting policy"


OWNER_ONLY = frozenset({Action.SHARE, Action.DELETE, Action.ERASE, Action.RESIZE})

#: The capability a key needs for each action.
NEEDS: Mapping[Action, Capability] = {
    Action.READ: Capability.READ,
    Action.WRITE: Capability.WRITE,
    **{a: Capability.MANAGE for a in Action if a not in (Action.READ, Action.WRITE)},
}

#: Why an action needs its capability, where the action's name does not say it; refusals
#: and the web UI's disabled controls give it.
WHY: Mapping[Action, str] = {
    Action.REVIEW: (
        "reviewing is the check on what writing keys (agents) add, so a key that may only "
        "read and write cannot vouch for its own writes"
    ),
}


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str

    def __bool__(self) -> bool:
        return self.allowed


def visible(actor: Principal, memory: Memory) -> Decision:
    """Whether ``memory`` exists for ``actor`` at all (its key's scope, owner or team)."""
    if actor.scope is not None and memory.id not in actor.scope:
        return Decision(False, "the API key is not scoped to this memory")
    if memory.tenant_id == actor.user_id:
        return Decision(True, "owner")
    if memory.permissions is not Permission.TEAM:
        return Decision(False, "the memory is private to its owner")
    if memory.tenant_id not in actor.tenant_ids:
        return Decision(False, "not a member of the owner's team")
    return Decision(True, "team member")


def decide(actor: Principal, action: Action, memory: Memory) -> Decision:
    """Decide whether ``actor`` may do ``action`` on ``memory``, with the reason."""
    seen = visible(actor, memory)
    if not seen:
        return seen
    if (missing := lacking(actor, action)) is not None:
        return missing
    if action in OWNER_ONLY and memory.tenant_id != actor.user_id:
        return Decision(False, f"only the owner may {action.value}")
    return seen


def lacking(actor: Principal, action: Action) -> Decision | None:
    """The refusal when ``actor``'s key lacks the capability ``action`` needs, else None."""
    need = NEEDS[action]
    if need in actor.capabilities:
        return None
    why = f": {WHY[action]}" if action in WHY else ""
    return Decision(
        False, f"the API key lacks the '{need.value}' capability (to {action.value}){why}"
    )


def authorised(
    actor: Principal, action: Action, memory: Memory | None, memory_id: str = "?"
) -> Memory:
    """``memory`` if ``actor`` may ``action`` it. A memory the caller cannot read does not
    exist for it (NotFound, as for a missing one); one it can read but not act on is Forbidden
    with the decision's reason."""
    if memory is None or not visible(actor, memory):
        raise NotFound(f"Memory '{memory.id if memory else memory_id}' not found.")
    decision = decide(actor, action, memory)
    if not decision:
        raise Forbidden(decision.reason)
    return memory


def readable(
    actor: Principal, ids: Sequence[str], found: Mapping[str, Memory]
) -> tuple[Scope, list[Memory]]:
    """The memories among ``ids`` (looked up as ``found``) that ``actor`` may read, in order,
    and their scope; the others are dropped, as RAGFlow does. A key without the ``read``
    capability is refused (Forbidden) when any of them exists for it."""
    allowed = [found[i] for i in ids if i in found and visible(actor, found[i])]
    if allowed and (missing := lacking(actor, Action.READ)) is not None:
        raise Forbidden(missing.reason)
    return Scope(frozenset(m.id for m in allowed)), allowed


def writable(actor: Principal, ids: Sequence[str], found: Mapping[str, Memory]) -> list[Memory]:
    """Every memory of ``ids`` if ``actor`` may write them all; else NotFound naming the ones
    it cannot see, or Forbidden."""
    missing = [i for i in ids if i not in found or not visible(actor, found[i])]
    if missing:
        raise NotFound(f"Memory {missing} not found.")
    return [authorised(actor, Action.WRITE, found[i]) for i in ids]


def require_admin(actor: Principal, what: str) -> None:
    """Only an administrator with an unscoped key that may manage may ``what``."""
    if not actor.is_admin or actor.scope is not None:
        raise Forbidden(f"only an administrator (with an unscoped key) may {what}")
    require_manage(actor, what)


def require_self_or_admin(actor: Principal, user_id: str, what: str) -> None:
    """Users manage their own keys, admins anyone's; a scoped key manages none, nor one
    without the ``manage`` capability."""
    if actor.scope is not None or (actor.user_id != user_id and not actor.is_admin):
        raise Forbidden(f"only the user or an administrator (with an unscoped key) may {what}")
    require_manage(actor, what)


def require_manage(actor: Principal, what: str) -> None:
    """Forbidden, naming the capability, unless ``actor``'s key may manage."""
    if Capability.MANAGE not in actor.capabilities:
        raise Forbidden(f"the API key lacks the 'manage' capability (to {what})")

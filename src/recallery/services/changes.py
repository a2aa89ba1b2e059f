"""One procedure for every cascading change: what changing some entries also changes, planned
once from the store's state, then reported (a dry run) or applied as planned.

Every caller goes through it: a single disable, enable, forget, restore or erase
(:mod:`recallery.services.lifecycle`), a bulk change of a selection
(:mod:`recallery.services.curation`), a data-subject request about one person
(:mod:`recallery.services.subjects`) and an import that brings entries in disabled or forgotten
(:mod:`recallery.services.transfer`). The rules:

- disabling, enabling, forgetting, restoring or reviewing a raw turn applies to the current
  entries extracted from it;
- erasing takes every version of an entry and everything extracted from them, followed a batch
  at a time;
- nothing crosses people (:mod:`recallery.ownership`): a version link is followed only
  to an entry of the same user of the same memory, whatever links exist; what was extracted
  from a person's turn goes with the turn (the words were theirs);
- an entry already in the wanted state is neither changed nor counted;
- one audit event per changed entry, with one reason rule (:func:`audit_reason`).

Each planned change says why it is in the plan (:class:`Why`), so a receipt can list every
entry with its user and its reason. The plan's :attr:`ChangeSet.token` is a digest of what it
changes: applying with a dry run's token changes exactly what the dry run reported, or nothing.
"""

from __future__ import annotations

import enum
import hashlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from recallery.audit import summary
from recallery.errors import InvalidInput
from recallery.models import AuditAction, Entry, EntryType, Principal, Scope, Trust
from recallery.ownership import same_person
from recallery.policies.eviction import delete_with_tombstones
from recallery.requests import BulkAction
from recallery.store.filters import EntryFilter
from recallery.store.reader import Reader
from recallery.store.writer import Writer

#: What a token looks like (a digest's first 32 hex digits).
_TOKEN = re.compile(r"[0-9a-f]{32}")
#: Ids per ``IN (...)`` list when following cascades.
CHUNK = 500
#: Most entries one read of a cascade returns.
LIMIT = 10**9


class Why(enum.StrEnum):
    """Why an entry is in a change set."""

    ASKED = "asked"
    """Named by the request (an entry, a selection)."""
    OWN_TURN = "own turn"
    """A turn of the person a request is about."""
    OWN_FACT = "own entry"
    """A current entry of the person a request is about."""
    DERIVED = "derived"
    """Extracted from a turn the change reaches."""
    OLDER_VERSION = "older version"
    """A retired version of an entry the change reaches (or a newer one, for an erasure)."""


@dataclass(frozen=True)
class Change:
    """One entry a change set changes, whose it is, and why (``origin``: the entry it cascades
    from, or itself)."""

    message_id: int
    user_id: str
    why: Why
    origin: int


@dataclass(frozen=True)
class ChangeSet:
    """What ``action`` changes in one memory: each entry with why, in id order, and the entries
    as read (for the audit events' before values)."""

    action: BulkAction
    memory_id: str
    selected: tuple[int, ...]
    changes: tuple[Change, ...]
    entries: Mapping[int, Entry]

    @property
    def ids(self) -> list[int]:
        return [c.message_id for c in self.changes]

    @property
    def token(self) -> str:
        """A digest of the selection and the change set (see the module docstring)."""
        return token(self.action, self.selected, self.ids)

    def of(self, *whys: Why) -> tuple[int, ...]:
        return tuple(c.message_id for c in self.changes if c.why in whys)


def token(action: BulkAction, selected: Iterable[int], changes: Iterable[int]) -> str:
    ids, changed = ",".join(map(str, sorted(selected))), ",".join(map(str, sorted(changes)))
    text = f"{action.value}|{ids}|{changed}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def checked_token(value: object, what: str = "a bulk change's dry run") -> str | None:
    """A dry run's token as sent (None: apply whatever the plan is now)."""
    if value is None:
        return None
    if not isinstance(value, str) or not _TOKEN.fullmatch(value):
        raise InvalidInput("token", f"token must be the token of {what}.")
    return value


def plan(r: Reader, scope: Scope, action: BulkAction, selected: Sequence[int]) -> ChangeSet:
    """The change set of ``action`` on the entries ``selected`` (ids of one memory of
    ``scope``, each known to exist), in ``r``'s state."""
    chosen = r.get_entries(scope, selected)
    start = {i: Change(i, chosen[i].user_id, Why.ASKED, i) for i in selected}
    return _grown(r, scope, action, tuple(selected), start, chosen)


def plan_person(r: Reader, scope: Scope, action: BulkAction, user_id: str) -> ChangeSet:
    """The change set of ``action`` on everything about one person in one memory: their turns,
    what was extracted from them, and their older versions (forgotten ones left out of a
    forget: they are forgotten already)."""
    f = EntryFilter(user_id=user_id, current_only=False, hide_forgotten=action is BulkAction.FORGET)
    own, _ = r.entries(scope, f, limit=LIMIT)
    turns = {e.message_id for e in own if e.message_type is EntryType.RAW}
    start = {
        e.message_id: Change(e.message_id, user_id, _own_why(e, turns), e.message_id) for e in own
    }
    chosen = {e.message_id: e for e in own}
    return _grown(r, scope, action, (), start, chosen)


def _own_why(e: Entry, turns: set[int]) -> Why:
    if e.message_type is EntryType.RAW:
        return Why.OWN_TURN
    if e.retired_at is not None:
        return Why.OLDER_VERSION
    return Why.DERIVED if e.source_id in turns else Why.OWN_FACT


def _grown(
    r: Reader,
    scope: Scope,
    action: BulkAction,
    selected: tuple[int, ...],
    start: dict[int, Change],
    chosen: dict[int, Entry],
) -> ChangeSet:
    memory_id = next(iter(scope.memory_ids))
    if action is BulkAction.ERASE:
        found = _closure(r, scope, start, chosen)
        return ChangeSet(action, memory_id, selected, _sorted(found), chosen)
    wants = WANTS[action]
    found = {i: c for i, c in start.items() if wants(chosen[i])}
    raws = [i for i in start if chosen[i].message_type is EntryType.RAW]
    for batch in _batches(raws):
        children, _ = r.entries(scope, EntryFilter(source_ids=frozenset(batch)), limit=LIMIT)
        for child in sorted(children, key=lambda e: e.message_id):
            parent = chosen[child.source_id or 0]
            chosen.setdefault(child.message_id, child)
            if child.message_id not in start and wants(child):
                found.setdefault(
                    child.message_id,
                    Change(child.message_id, child.user_id, Why.DERIVED, parent.message_id),
                )
    return ChangeSet(action, memory_id, selected, _sorted(found), chosen)


def _closure(
    r: Reader, scope: Scope, start: dict[int, Change], chosen: dict[int, Entry]
) -> dict[int, Change]:
    """``start`` with every version of each entry and everything extracted from them, a batch
    at a time, a version link followed only to the same person's entry."""
    found = dict(start)
    frontier = [chosen[i] for i in start]
    while frontier:
        links = {
            other: e
            for e in frontier
            for other in (e.supersedes, e.superseded_by)
            if other is not None and other not in found
        }
        reached: list[tuple[Entry, Entry, Why]] = []
        for batch in _batches(sorted(links)):
            for e in r.get_entries(scope, batch).values():
                reached.append((e, links[e.message_id], Why.OLDER_VERSION))
        for batch in _batches([e.message_id for e in frontier]):
            f = EntryFilter(source_ids=frozenset(batch), current_only=False)
            children, _ = r.entries(scope, f, limit=LIMIT)
            reached.extend((c, chosen[c.source_id or 0], Why.DERIVED) for c in children)
        frontier = []
        for e, parent, why in sorted(reached, key=lambda t: t[0].message_id):
            crosses = why is Why.OLDER_VERSION and not same_person(e, parent)
            if e.message_id in found or crosses:
                continue
            chosen[e.message_id] = e
            found[e.message_id] = Change(e.message_id, e.user_id, why, parent.message_id)
            frontier.append(e)
    return found


def apply(w: Writer, actor: Principal, cs: ChangeSet, now: datetime, reason: str) -> list[int]:
    """Carry out ``cs`` in ``w``'s transaction; the ids changed, ascending. An erasure goes
    through :func:`delete_with_tombstones` (the store scrubs its files after the commit)."""
    ids = cs.ids
    if not ids:
        return []
    if cs.action is BulkAction.ERASE:
        why = reason or "erased"
        return delete_with_tombstones(
            w, cs.memory_id, ids, now, actor.user_id, why, AuditAction.ENTRY_ERASE
        )
    field, value, event = _setting(cs.action, now)
    for batch in _batches(ids):
        w.update_entries(batch, {field: value})
    for c in cs.changes:
        w.audit(
            at=now,
            actor=actor.user_id,
            action=event,
            memory_id=cs.memory_id,
            message_id=c.message_id,
            reason=audit_reason(cs.action, c, reason),
            before={field: summary(getattr(cs.entries[c.message_id], field))},
            after={field: summary(value)},
        )
    return ids


def audit_reason(action: BulkAction, c: Change, reason: str) -> str:
    """The one reason rule: the request's reason on what it named or was about, and on every
    entry of a verdict (a curator's confirm or reject of a turn is their verdict on its facts
    too); on any other cascade, the entry it came from."""
    if action in (BulkAction.CONFIRM, BulkAction.REJECT) or c.origin == c.message_id:
        return reason
    return f"cascade from message {c.origin}"


#: The field each action sets and the audit event it writes.
_EVENTS: dict[BulkAction, tuple[str, AuditAction]] = {
    BulkAction.DISABLE: ("status", AuditAction.ENTRY_DISABLE),
    BulkAction.ENABLE: ("status", AuditAction.ENTRY_ENABLE),
    BulkAction.FORGET: ("forget_at", AuditAction.ENTRY_FORGET),
    BulkAction.RESTORE: ("forget_at", AuditAction.ENTRY_RESTORE),
    BulkAction.CONFIRM: ("trust", AuditAction.ENTRY_CONFIRM),
    BulkAction.REJECT: ("trust", AuditAction.ENTRY_REJECT),
}


def _setting(action: BulkAction, now: datetime) -> tuple[str, object, AuditAction]:
    field, event = _EVENTS[action]
    value = {
        BulkAction.DISABLE: False,
        BulkAction.ENABLE: True,
        BulkAction.FORGET: now,
        BulkAction.RESTORE: None,
        BulkAction.CONFIRM: Trust.CONFIRMED,
        BulkAction.REJECT: Trust.REJECTED,
    }[action]
    return field, value, event


#: Whether an action changes an entry (one already as asked is left alone).
WANTS: dict[BulkAction, Callable[[Entry], bool]] = {
    BulkAction.DISABLE: lambda e: e.status,
    BulkAction.ENABLE: lambda e: not e.status,
    BulkAction.FORGET: lambda e: e.forget_at is None,
    BulkAction.RESTORE: lambda e: e.forget_at is not None,
    BulkAction.CONFIRM: lambda e: e.trust is not Trust.CONFIRMED,
    BulkAction.REJECT: lambda e: e.trust is not Trust.REJECTED,
}


def _sorted(found: Mapping[int, Change]) -> tuple[Change, ...]:
    return tuple(found[i] for i in sorted(found))


def _batches(ids: Sequence[int]) -> list[list[int]]:
    return [list(ids[i : i + CHUNK]) for i in range(0, len(ids), CHUNK)]


__all__ = ["Change", "ChangeSet", "Why", "apply", "audit_reason", "plan", "plan_person", "token"]

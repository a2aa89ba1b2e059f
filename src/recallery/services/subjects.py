"""Data-subject requests and people: forget or erase everything about one end user across the
memories the caller may change, and what the store holds about a user, agent or session.

A request is planned by one function (:func:`_plan`) that a dry run calls in a read
transaction and applying calls again inside its write transaction, under every memory's row
lock, so the dry run's numbers are what applying changes when nothing was written between
them, and applying changes exactly what its receipt lists. Applying is one transaction over
every memory: all or nothing, one audit event per changed entry, as the single-entry
operations write them (:mod:`recallery.services.lifecycle`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from recallery import validation as v
from recallery.access import Action, authorised, decide
from recallery.audit import summary
from recallery.clock import Clock
from recallery.errors import InvalidInput
from recallery.models import AuditAction, EntryType, Memory, Principal, Scope
from recallery.policies.eviction import delete_with_tombstones
from recallery.requests import Bucket, bucket_starts
from recallery.store.base import Store
from recallery.store.filters import EntryFilter
from recallery.store.queries import MemoryQuery
from recallery.store.reader import Reader
from recallery.store.writer import Writer
from recallery.subjects import (
    MemoryShare,
    Refused,
    SubjectAction,
    SubjectKind,
    SubjectMemory,
    SubjectProfile,
    SubjectReceipt,
    subject_kind,
)

#: Most memories one request or page looks at.
MAX_MEMORIES = 10_000
#: Ids per ``IN (...)`` list when following cascades.
CHUNK = 500
#: What each request needs the caller to be allowed on a memory.
NEEDS = {SubjectAction.FORGET: Action.WRITE, SubjectAction.ERASE: Action.ERASE}
#: Newest facts a person's page shows.
FACTS_SHOWN = 50
#: Days a person's timeline covers.
DAYS = 30


@dataclass(frozen=True)
class _Plan:
    """One memory's part of a request: the user's entries and the cascade, with, for a
    forget, the turn each cascaded entry was extracted from."""

    memory: Memory
    entries: tuple[int, ...]
    cascade: tuple[int, ...]
    sources: dict[int, int]


class SubjectService:
    """Forget or erase everything about a user; the pages of users, agents and sessions."""

    def __init__(self, store: Store, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    def forget_subject(
        self, actor: Principal, user_id: object, *, dry_run: object = True, reason: str = ""
    ) -> SubjectReceipt:
        """Forget every current entry of ``user_id`` (and what was extracted from their
        turns) in each memory the caller may write; a dry run (the default) only counts."""
        return self._request(actor, SubjectAction.FORGET, user_id, dry_run, reason)

    def erase_subject(
        self, actor: Principal, user_id: object, *, dry_run: object = True, reason: str = ""
    ) -> SubjectReceipt:
        """Erase every entry of ``user_id`` with every version and extract of them, in each
        memory the caller may erase (its own); a dry run (the default) only counts."""
        return self._request(actor, SubjectAction.ERASE, user_id, dry_run, reason)

    def _request(
        self,
        actor: Principal,
        action: SubjectAction,
        user_id: object,
        dry_run: object,
        reason: str,
    ) -> SubjectReceipt:
        user = v.text(user_id, "user_id", empty=False, limit=v.MAX_ID_TEXT)
        dry = v.boolean(dry_run, "dry_run")
        why = v.text(reason, "reason", limit=1024) or f"{action.value} everything about a user"
        with self.store.read() as r:
            changeable, refused = self._memories(r, actor, action, user)
            changeable.sort(key=lambda m: m.id)  # one lock order, no deadlock
            if dry:
                plans = [_plan(r, m, action, user) for m in changeable]
        if dry:
            return _receipt(action, user, True, plans, refused, self.clock.now(), actor, why)
        now = self.clock.now()
        with self.store.write() as w:
            plans = []
            for m in changeable:
                locked = authorised(actor, NEEDS[action], w.lock_memory(m.id), m.id)
                plans.append(_plan(w, locked, action, user))
            for p in plans:
                _apply(w, p, action, now, actor.user_id, why)
        if action is SubjectAction.ERASE and any(p.entries for p in plans):
            self.store.scrub()
        return _receipt(action, user, False, plans, refused, now, actor, why)

    def _memories(
        self, r: Reader, actor: Principal, action: SubjectAction, user: str
    ) -> tuple[list[Memory], list[Refused]]:
        """The memories the request changes, and those it leaves that the caller can read
        and that hold entries of ``user``, with the reason."""
        changeable, refused = [], []
        for m in _visible(r, actor):
            decision = decide(actor, NEEDS[action], m)
            if decision:
                changeable.append(m)
            elif decide(actor, Action.READ, m):
                held = len(r.entry_ids(Scope.of(m.id), EntryFilter(user_id=user)))
                if held:
                    refused.append(Refused(m.id, m.name, held, decision.reason))
        return changeable, refused

    def subject_profile(self, actor: Principal, kind: object, value: object) -> SubjectProfile:
        """What the memories the caller may read hold about one user, agent or session."""
        who = subject_kind(kind)
        name = v.text(value, who.value, empty=False, limit=v.MAX_ID_TEXT)
        about = _about(who, name)
        now = self.clock.now()
        starts = bucket_starts(now, Bucket.DAY, DAYS)
        with self.store.read() as r:
            readable = [m for m in _visible(r, actor) if decide(actor, Action.READ, m)]
            scope = Scope(frozenset(m.id for m in readable))
            held = r.memory_type_counts(scope, _with(about, current_only=False))
            memories = [SubjectMemory(m.id, m.name, held[m.id]) for m in readable if m.id in held]
            facts, _ = r.entries(
                scope, _with(about, types=frozenset(EntryType.extracted())), limit=FACTS_SHOWN
            )
            ends = starts[-1] + Bucket.DAY.width
            per_day = tuple(
                r.recorded_counts(scope, _with(about, current_only=False), starts, ends)
            )
        return SubjectProfile(who, name, tuple(memories), tuple(facts), starts, per_day)


def _about(kind: SubjectKind, value: str) -> EntryFilter:
    if kind is SubjectKind.USER:
        return EntryFilter(user_id=value)
    if kind is SubjectKind.AGENT:
        return EntryFilter(agent_ids=frozenset({value}))
    return EntryFilter(session_id=value)


def _with(f: EntryFilter, **changes: object) -> EntryFilter:
    return replace(f, **changes)  # type: ignore[arg-type]


def _visible(r: Reader, actor: Principal) -> list[Memory]:
    """Every memory ``actor`` can see (its key's scope, its own and its teams')."""
    ids = None if actor.scope is None else frozenset(actor.scope)
    query = MemoryQuery(
        user_id=actor.user_id, tenant_ids=actor.tenant_ids, ids=ids, limit=MAX_MEMORIES
    )
    found, total = r.find_memories(query)
    if total > MAX_MEMORIES:
        raise InvalidInput("user_id", f"the key reaches more than {MAX_MEMORIES} memories.")
    return found


def _plan(r: Reader, memory: Memory, action: SubjectAction, user: str) -> _Plan:
    scope = Scope.of(memory.id)
    if action is SubjectAction.FORGET:
        own = r.entry_ids(scope, EntryFilter(user_id=user, hide_forgotten=True))
        turns = r.entry_ids(
            scope,
            EntryFilter(user_id=user, types=frozenset({EntryType.RAW}), hide_forgotten=True),
        )
        mine = set(own)
        sources = {
            e.message_id: e.source_id
            for chunk in _chunks(turns)
            for e in r.entries(
                scope,
                EntryFilter(source_ids=frozenset(chunk), hide_forgotten=True),
                limit=100_000,
            )[0]
            if e.message_id not in mine and e.source_id is not None
        }
        return _Plan(memory, tuple(own), tuple(sorted(sources)), sources)
    own = r.entry_ids(scope, EntryFilter(user_id=user, current_only=False))
    doomed = _erasure_closure(r, scope, own)
    return _Plan(memory, tuple(own), tuple(sorted(doomed - set(own))), {})


def _erasure_closure(r: Reader, scope: Scope, start: Iterable[int]) -> set[int]:
    """``start`` with every version of each entry and everything extracted from them, as a
    single erasure follows them (:meth:`LifecycleService._erasure_set`), a batch at a time."""
    doomed: set[int] = set()
    frontier = set(start)
    while frontier:
        doomed |= frontier
        found: set[int] = set()
        for chunk in _chunks(sorted(frontier)):
            for e in r.get_entries(scope, chunk).values():
                found.update(i for i in (e.supersedes, e.superseded_by) if i is not None)
            found.update(
                r.entry_ids(scope, EntryFilter(source_ids=frozenset(chunk), current_only=False))
            )
        frontier = found - doomed
    return doomed


def _apply(
    w: Writer, p: _Plan, action: SubjectAction, now: datetime, actor: str, reason: str
) -> None:
    mid = p.memory.id
    if action is SubjectAction.ERASE:
        ids = sorted({*p.entries, *p.cascade})
        if ids:
            delete_with_tombstones(w, mid, ids, now, actor, reason, AuditAction.ENTRY_ERASE)
        return
    changes: dict[str, object] = {"forget_at": now}
    for chunk in _chunks([*p.entries, *p.cascade]):
        w.update_entries(chunk, changes)
    for eid in [*p.entries, *p.cascade]:
        source = p.sources.get(eid)
        w.audit(
            at=now,
            actor=actor,
            action=AuditAction.ENTRY_FORGET,
            memory_id=mid,
            message_id=eid,
            reason=reason if source is None else f"cascade from message {source}",
            before={"forget_at": None},
            after={"forget_at": summary(now)},
        )


def _receipt(
    action: SubjectAction,
    user: str,
    dry: bool,
    plans: Sequence[_Plan],
    refused: Sequence[Refused],
    at: datetime,
    actor: Principal,
    reason: str,
) -> SubjectReceipt:
    shares = tuple(
        MemoryShare(p.memory.id, p.memory.name, p.entries, p.cascade)
        for p in plans
        if p.entries or p.cascade
    )
    return SubjectReceipt(action, user, dry, shares, tuple(refused), at, actor.user_id, reason)


def _chunks(ids: Sequence[int]) -> list[list[int]]:
    return [list(ids[i : i + CHUNK]) for i in range(0, len(ids), CHUNK)]


__all__ = ["SubjectService"]

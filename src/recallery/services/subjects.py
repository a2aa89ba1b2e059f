"""Data subjects, the people entries are about: forget or erase everything about one end user
across the memories the caller may change; what the store holds about a user, agent or
session; and the listing of them (the web's People page), each with its counts.

A request is planned by one function (:func:`_plan`) that a dry run calls in a read
transaction and applying calls again inside its write transaction, under every memory's row
lock, so the dry run's numbers are what applying changes when nothing was written between
them, and applying changes exactly what its receipt lists. Applying is one transaction over
every memory: all or nothing, one audit event per changed entry, as the single-entry
operations write them (:mod:`recallery.services.lifecycle`).

What the caller may read decides who is listed: an id stored only in memories its key cannot
read (another owner's, a private one of a team mate, one outside a scoped key) is not shown,
and a key without the ``read`` capability sees nobody.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import NamedTuple

from recallery import validation as v
from recallery.access import Action, authorised, decide, lacking, require_admin
from recallery.clock import Clock
from recallery.errors import Conflict, Forbidden, InvalidInput
from recallery.models import EntryType, Memory, Page, Principal, Scope
from recallery.requests import Bucket, BulkAction, bucket_starts
from recallery.requests.subjects import (
    Changed,
    MemoryShare,
    Person,
    Refused,
    SubjectAction,
    SubjectKind,
    SubjectMemory,
    SubjectProfile,
    SubjectReceipt,
    subject_kind,
)
from recallery.services import changes
from recallery.services.changes import ChangeSet
from recallery.services.memories import visible_memories
from recallery.store.base import Store
from recallery.store.filters import EntryFilter
from recallery.store.reader import Reader

#: What each request needs the caller to be allowed on a memory.
NEEDS = {SubjectAction.FORGET: Action.WRITE, SubjectAction.ERASE: Action.ERASE}
#: Newest facts a person's page shows.
FACTS_SHOWN = 50
#: Days a person's timeline covers.
DAYS = 30
#: Most rows a page of the listing may ask for.
MAX_PAGE_SIZE = v.MAX_TOP_N


class SubjectService:
    """Forget or erase everything about a user; the listing and pages of users, agents and
    sessions."""

    def __init__(self, store: Store, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    def forget_subject(
        self,
        actor: Principal,
        user_id: object,
        *,
        dry_run: object = True,
        reason: str = "",
        token: object = None,
        everywhere: object = False,
    ) -> SubjectReceipt:
        """Forget every entry of ``user_id`` (their turns, what was extracted from them and
        their older versions) in each memory the caller may read and write; a dry run (the
        default) only lists them. ``everywhere``: an administrator's request across every
        tenant."""
        return self._request(
            actor, SubjectAction.FORGET, user_id, dry_run, reason, token, everywhere
        )

    def erase_subject(
        self,
        actor: Principal,
        user_id: object,
        *,
        dry_run: object = True,
        reason: str = "",
        token: object = None,
        everywhere: object = False,
    ) -> SubjectReceipt:
        """Erase every entry of ``user_id`` with every version and extract of them, in each
        memory the caller may read and erase (its own); a dry run (the default) only lists
        them. ``everywhere``: an administrator's request across every tenant."""
        return self._request(
            actor, SubjectAction.ERASE, user_id, dry_run, reason, token, everywhere
        )

    def _request(
        self,
        actor: Principal,
        action: SubjectAction,
        user_id: object,
        dry_run: object,
        reason: str,
        token: object,
        everywhere: object,
    ) -> SubjectReceipt:
        """Plan the request in every memory it may change (:mod:`recallery.services.changes`,
        never beyond the person), then report it, or apply it in one transaction under every
        memory's row lock: all or nothing, exactly what the dry run with ``token`` listed."""
        user = v.text(user_id, "user_id", empty=False, limit=v.MAX_ID_TEXT)
        dry = v.boolean(dry_run, "dry_run")
        wide = v.boolean(everywhere, "everywhere")
        expected = changes.checked_token(token, "a data-subject request's dry run")
        if wide:
            require_admin(actor, f"{action.value} a person in every tenant")
            if (missing := lacking(actor, NEEDS[action])) is not None:
                raise Forbidden(missing.reason)
        default = f"{action.value} everything about a user" + (" (every tenant)" if wide else "")
        why = v.text(reason, "reason", limit=1024) or default
        with self.store.read() as r:
            changeable, refused = self._memories(r, actor, action, user, wide)
            changeable.sort(key=lambda m: m.id)  # one lock order, no deadlock
            if dry:
                plans = [_plan(r, m, action, user) for m in changeable]
        if dry:
            return _receipt(action, user, True, plans, refused, self.clock.now(), actor, why)
        now = self.clock.now()
        with self.store.write() as w:
            plans = []
            for m in changeable:
                locked = w.lock_memory(m.id)
                if locked is None:
                    continue  # deleted since: nothing of the person is left in it
                if not wide:
                    authorised(actor, NEEDS[action], locked, m.id)
                plans.append(_plan(w, locked, action, user))
            planned = _receipt(action, user, False, plans, refused, now, actor, why)
            if expected is not None and planned.token != expected:
                raise Conflict(
                    f"What is held about user '{user}' changed since the dry run: applying would "
                    f"now {action.value} {planned.count} entries. Nothing was changed; run the "
                    "dry run again."
                )
            for part in plans:
                changes.apply(w, actor, part.plan, now, why)
        if action is SubjectAction.ERASE and planned.count:
            # the store scrubbed on commit; this says whether it could (a reader may hold it)
            return replace(planned, scrubbed=self.store.scrub())
        return planned

    def _memories(
        self, r: Reader, actor: Principal, action: SubjectAction, user: str, wide: bool
    ) -> tuple[list[Memory], list[Refused]]:
        """The memories the request changes, and those it leaves that the caller can read
        and that hold entries of ``user``, with the reason. Choosing entries by their user is
        a read: a key without ``read`` changes nothing (as a bulk change by filter)."""
        if wide:
            return r.every_memory(), []
        changeable, refused = [], []
        for m in visible_memories(r, actor, "user_id"):
            decision = decide(actor, NEEDS[action], m)
            reads = decide(actor, Action.READ, m)
            if decision and reads:
                changeable.append(m)
            elif reads:
                held = len(r.entry_ids(Scope.of(m.id), EntryFilter(user_id=user)))
                if held:
                    refused.append(Refused(m.id, m.name, held, decision.reason))
            elif decision:
                raise Forbidden(
                    "the API key lacks the 'read' capability: a request about a user selects "
                    "entries by their user, which is a read"
                )
        return changeable, refused

    def subject_profile(self, actor: Principal, kind: object, value: object) -> SubjectProfile:
        """What the memories the caller may read hold about one user, agent or session."""
        who = subject_kind(kind)
        name = v.text(value, who.value, empty=False, limit=v.MAX_ID_TEXT)
        about = _about(who, name)
        now = self.clock.now()
        starts = bucket_starts(now, Bucket.DAY, DAYS)
        with self.store.read() as r:
            readable = [
                m for m in visible_memories(r, actor, "user_id") if decide(actor, Action.READ, m)
            ]
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

    def list_subjects(
        self,
        actor: Principal,
        kind: object = "user",
        *,
        keywords: object = None,
        page: object = 1,
        page_size: object = 30,
    ) -> Page[Person]:
        """The users (``kind="user"``), agents or sessions of the memories ``actor`` may read,
        newest activity first: page ``page`` of ``page_size``, only ids containing
        ``keywords`` (any case) when given."""
        who = subject_kind(kind)
        text = "" if keywords is None else v.text(keywords, "keywords", limit=v.MAX_ID_TEXT)
        number = v.page(page)
        size = _page_size(page_size)
        with self.store.read() as r:
            memories = visible_memories(r, actor, "kind")
            scope = Scope(frozenset(m.id for m in memories if decide(actor, Action.READ, m)))
            found, total = r.subjects(
                scope, who, text.strip(), limit=size, offset=(number - 1) * size
            )
        return Page(tuple(found), total)


def _page_size(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_PAGE_SIZE:
        raise InvalidInput("page_size", f"page_size must be between 1 and {MAX_PAGE_SIZE}")
    return value


def _about(kind: SubjectKind, value: str) -> EntryFilter:
    if kind is SubjectKind.USER:
        return EntryFilter(user_id=value)
    if kind is SubjectKind.AGENT:
        return EntryFilter(agent_ids=frozenset({value}))
    return EntryFilter(session_id=value)


def _with(f: EntryFilter, **changes: object) -> EntryFilter:
    return replace(f, **changes)  # type: ignore[arg-type]


class _Part(NamedTuple):
    """One memory's part of a request."""

    memory: Memory
    plan: ChangeSet


def _plan(r: Reader, memory: Memory, action: SubjectAction, user: str) -> _Part:
    kind = BulkAction.FORGET if action is SubjectAction.FORGET else BulkAction.ERASE
    return _Part(memory, changes.plan_person(r, Scope.of(memory.id), kind, user))


def _receipt(
    action: SubjectAction,
    user: str,
    dry: bool,
    plans: Sequence[_Part],
    refused: Sequence[Refused],
    at: datetime,
    actor: Principal,
    reason: str,
) -> SubjectReceipt:
    shares = tuple(
        MemoryShare(
            m.id,
            m.name,
            tuple(Changed(c.message_id, c.user_id, c.why.value, c.origin) for c in p.changes),
            m.tenant_id,
        )
        for m, p in plans
        if p.changes
    )
    return SubjectReceipt(action, user, dry, shares, tuple(refused), at, actor.user_id, reason)


__all__ = ["SubjectService"]

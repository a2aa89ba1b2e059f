"""Curation at the size of a memory: bulk changes with a dry run, the review queue and the
counts of entries over time (the shapes are :mod:`recallery.wire.curation`'s).

A bulk change is planned once and applied as planned in one transaction
(:mod:`recallery.services.changes`), with the rules, cascades and audit events of one change at a
time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from recallery import validation as v
from recallery.access import Action, authorised, decide
from recallery.clock import Clock
from recallery.errors import Conflict, InvalidInput, NotFound
from recallery.models import EntryType, Memory, Principal, Scope, Trust
from recallery.requests import (
    MAX_BUCKETS,
    BulkAction,
    BulkResult,
    FactFilter,
    FactPage,
    MessageFilter,
    ReviewFilter,
    ReviewItem,
    ReviewPage,
    Timeline,
    TimelineClock,
    bucket_starts,
    bulk_action,
    timeline_clock,
)
from recallery.requests import bucket as bucket_kind
from recallery.requests.either import fact_filter, review_filter
from recallery.services import changes
from recallery.services.entries import checked_filter, turns_filter
from recallery.services.lifecycle import LifecycleService
from recallery.store.base import Store
from recallery.store.filters import EntryFilter
from recallery.store.reader import Reader

#: Most entries one bulk change names by id.
MAX_BULK_IDS = 10_000
#: What each bulk action needs the caller to be allowed.
NEEDS = {
    BulkAction.DISABLE: Action.WRITE,
    BulkAction.ENABLE: Action.WRITE,
    BulkAction.FORGET: Action.WRITE,
    BulkAction.RESTORE: Action.WRITE,
    BulkAction.CONFIRM: Action.REVIEW,
    BulkAction.REJECT: Action.REVIEW,
    BulkAction.ERASE: Action.ERASE,
}
#: Extracted entries waiting for a verdict.
UNREVIEWED = EntryFilter(
    types=frozenset(EntryType.extracted()),
    trust=frozenset({Trust.UNREVIEWED}),
    enabled_only=True,  # a disabled entry is out of every retrieval: it waits for no verdict
    hide_forgotten=True,
)


class CurationService:
    """Bulk changes, the review queue and the timeline, each checked against the caller."""

    def __init__(self, store: Store, clock: Clock, lifecycle: LifecycleService) -> None:
        self.store = store
        self.clock = clock
        self.lifecycle = lifecycle

    def bulk(
        self,
        actor: Principal,
        memory_id: object,
        action: object,
        *,
        message_ids: Sequence[object] | None = None,
        filter: MessageFilter | None = None,
        dry_run: object = True,
        reason: str = "",
        token: object = None,
    ) -> BulkResult:
        """Disable, enable, forget, restore, confirm, reject or erase the entries named by
        ``message_ids``, or every raw turn ``filter`` selects (one of the two; a filter needs
        ``read``), each as its single operation would (``reason`` goes with verdicts and
        erasures). A dry run (the default) changes nothing and says exactly what applying
        would change; it is refused, as the change would be, when the caller may not make it.
        Applying is one transaction: every entry changes or none does. With the dry run's
        ``token`` it changes exactly what the dry run reported, or refuses with a conflict."""
        kind = bulk_action(action)
        mid = v.memory_id(memory_id)
        dry = v.boolean(dry_run, "dry_run")
        expected = changes.checked_token(token)
        if (message_ids is None) == (filter is None):
            raise InvalidInput("message_ids", "give either message_ids or a filter.")
        if dry:
            with self.store.read() as r:
                memory = authorised(actor, NEEDS[kind], r.memory(mid), mid)
                p = _plan(r, actor, memory, kind, message_ids, filter)
            return _result(actor, memory, p, dry=True, changed=p.ids)
        now = self.clock.now()
        with self.store.write() as w:
            memory = authorised(actor, NEEDS[kind], w.lock_memory(mid), mid)
            p = _plan(w, actor, memory, kind, message_ids, filter)
            if expected is not None and p.token != expected:
                raise Conflict(
                    "The selection changed since its dry run: applying would now change "
                    f"{len(p.changes)} of {len(p.selected)} selected entries. Nothing was "
                    "changed; run the dry run again."
                )
            changed = changes.apply(w, actor, p, now, reason)
        if kind is BulkAction.ERASE and changed:
            self.store.scrub()
        return _result(actor, memory, p, dry=False, changed=changed)

    def review_queue(
        self,
        actor: Principal,
        memory_id: object,
        where: ReviewFilter | None = None,
        *,
        user_id: object = None,
        types: object = None,
        page: int = 1,
        page_size: int = 30,
    ) -> ReviewPage:
        """Extracted entries nobody has confirmed or rejected yet (current, enabled, not
        forgotten), oldest first, each with the raw turn it came from, filtered by ``where``
        or by its fields as keywords (:class:`ReviewFilter` says what each selects; None:
        any)."""
        f = review_filter(where, {"user_id": user_id, "types": types})
        mid = v.memory_id(memory_id)
        size = _page_size(page_size)
        offset = (v.page(page) - 1) * size
        wanted = replace(
            UNREVIEWED,
            user_id=v.optional_id_text(f.user_id, "user_id") or None,
            types=_fact_types(f.types) or UNREVIEWED.types,
        )
        with self.store.read() as r:
            memory = authorised(actor, Action.READ, r.memory(mid), mid)
            scope = Scope.of(memory.id)
            waiting, total = r.oldest_entries(scope, wanted, limit=size, offset=offset)
            sources = r.get_entries(scope, {e.source_id for e in waiting if e.source_id})
        items = tuple(
            ReviewItem(e, None if e.source_id is None else sources.get(e.source_id))
            for e in waiting
        )
        return ReviewPage(items, total)

    def facts(
        self,
        actor: Principal,
        memory_id: object,
        where: FactFilter | None = None,
        *,
        types: object = None,
        trust: object = None,
        status: object = None,
        forgotten: object = None,
        user_id: object = None,
        text: object = None,
        page: int = 1,
        page_size: int = 50,
    ) -> FactPage:
        """The current extracted entries (facts) of a memory, newest first by valid time,
        filtered by ``where`` or by its fields as keywords (:class:`FactFilter` says what each
        selects; None: any). With the page, in the same read, what became of the facts the
        filters select (:class:`~recallery.requests.curation.FactCounts`)."""
        given = {"types": types, "trust": trust, "status": status, "forgotten": forgotten}
        f = fact_filter(where, {**given, "user_id": user_id, "text": text})
        mid = v.memory_id(memory_id)
        size = _page_size(page_size)
        offset = (v.page(page) - 1) * size
        state = None if f.status is None else v.boolean(f.status, "status")
        gone = None if f.forgotten is None else v.boolean(f.forgotten, "forgotten")
        wanted = EntryFilter(
            types=_fact_types(f.types) or frozenset(EntryType.extracted()),
            trust=v.trust_states(f.trust),
            enabled_only=state is True,
            disabled_only=state is False,
            hide_forgotten=gone is False,
            forgotten_only=gone is True,
            user_id=v.optional_id_text(f.user_id, "user_id") or None,
            content_contains=v.text(f.text or "", "text", limit=v.MAX_ID_TEXT) or None,
        )
        with self.store.read() as r:
            memory = authorised(actor, Action.READ, r.memory(mid), mid)
            scope = Scope.of(memory.id)
            found, total = r.entries(scope, wanted, order="valid", limit=size, offset=offset)
            counts = r.fact_counts(scope, wanted)
        return FactPage(tuple(found), total, counts)

    def timeline(
        self,
        actor: Principal,
        memory_id: object,
        *,
        bucket: object = "day",
        buckets: int = 30,
        clock: object = "recorded",
    ) -> Timeline:
        """Entries the memory holds (every version, forgotten and disabled ones too) by the
        ``bucket`` in which they were recorded (``clock`` ``recorded``) or in which they
        became valid (``valid``: a turn's conversation time): the last ``buckets`` of them,
        up to now."""
        kind = bucket_kind(bucket)
        by = timeline_clock(clock)
        mid = v.memory_id(memory_id)
        if (
            isinstance(buckets, bool)
            or not isinstance(buckets, int)
            or not 0 < buckets <= MAX_BUCKETS
        ):
            raise InvalidInput("buckets", f"buckets must be an integer from 1 to {MAX_BUCKETS}.")
        starts = bucket_starts(self.clock.now(), kind, buckets)
        per_bucket = []
        with self.store.read() as r:
            memory = authorised(actor, Action.READ, r.memory(mid), mid)
            scope = Scope.of(memory.id)
            for start in starts:
                end = start + kind.width
                f = (
                    EntryFilter(current_only=False, recorded_since=start, recorded_before=end)
                    if by is TimelineClock.RECORDED
                    else EntryFilter(current_only=False, valid_since=start, valid_before=end)
                )
                per_bucket.append(r.type_counts(scope, f))
        held = [t for t in EntryType if t in memory.memory_types or any(t in c for c in per_bucket)]
        counts = {t: tuple(c.get(t, 0) for c in per_bucket) for t in held}
        return Timeline(kind, starts, counts, by)


def _plan(
    r: Reader,
    actor: Principal,
    memory: Memory,
    kind: BulkAction,
    message_ids: Sequence[object] | None,
    f: MessageFilter | None,
) -> changes.ChangeSet:
    """The plan of the change on the entries named, or the turns ``f`` selects, now."""
    scope = Scope.of(memory.id)
    if message_ids is not None:
        ids = _ids(message_ids)
        found = r.get_entries(scope, ids)
        missing = [i for i in ids if i not in found]
        if missing:
            raise NotFound(
                f"Messages {missing} in memory '{memory.id}' not found; nothing was changed."
            )
    else:
        assert f is not None
        authorised(actor, Action.READ, memory, memory.id)  # a filter's answer is a read
        ids = r.entry_ids(scope, turns_filter(checked_filter(f, "filter.")))
    return changes.plan(r, scope, kind, ids)


def _result(
    actor: Principal, memory: Memory, p: changes.ChangeSet, *, dry: bool, changed: Sequence[int]
) -> BulkResult:
    """The receipt; the ids of what changed only to a caller who may read them."""
    reads = bool(decide(actor, Action.READ, memory))
    return BulkResult(
        p.action,
        dry,
        len(changed),
        p.selected,
        tuple(changed) if reads else (),
        len(p.selected),
        p.token,
    )


def _ids(values: Sequence[object]) -> list[int]:
    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple)):
        raise InvalidInput("message_ids", "message_ids must be a list of message ids.")
    if not values or len(values) > MAX_BULK_IDS:
        raise InvalidInput("message_ids", f"message_ids must hold 1 to {MAX_BULK_IDS} ids.")
    return sorted({v.message_id(i, "message_ids") for i in values})


def _fact_types(value: object) -> frozenset[EntryType] | None:
    """Extracted types to filter by (None: any); a raw turn is not a fact."""
    kinds = v.entry_types(value or None, "message_type")
    if kinds and EntryType.RAW in kinds:
        raise InvalidInput(
            "message_type", "message_type: a raw turn is not a fact: choose an extracted type."
        )
    return kinds or None


def _page_size(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= v.MAX_TOP_N:
        raise InvalidInput("page_size", f"page_size must be between 1 and {v.MAX_TOP_N}")
    return value

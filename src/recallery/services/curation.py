"""Curation at the size of a memory: bulk changes with a dry run, the review queue and the
counts of entries over time (the shapes are :mod:`recallery.curation`'s).

A bulk change applies each entry's own lifecycle operation (:class:`LifecycleService`), so its
rules, cascades and audit events are exactly those of one change at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from recallery import validation as v
from recallery.access import Action, authorised
from recallery.clock import Clock
from recallery.curation import (
    MAX_BUCKETS,
    BulkAction,
    BulkResult,
    MessageFilter,
    ReviewItem,
    ReviewPage,
    Timeline,
    bucket_starts,
    bulk_action,
)
from recallery.curation import bucket as bucket_kind
from recallery.errors import InvalidInput, NotFound
from recallery.models import EntryType, Principal, Scope, Trust
from recallery.services.entries import message_filter, turns_filter
from recallery.services.lifecycle import LifecycleService
from recallery.store.base import Store
from recallery.store.filters import EntryFilter

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
    ) -> BulkResult:
        """Disable, enable, forget, restore, confirm, reject or erase the entries named by
        ``message_ids``, or every raw turn ``filter`` selects (one of the two), each as its
        single operation would (``reason`` goes with verdicts and erasures). A dry run (the
        default) changes nothing and says what it would select; it is refused, as the change
        would be, when the caller may not make the change."""
        kind = bulk_action(action)
        mid = v.memory_id(memory_id)
        dry = v.boolean(dry_run, "dry_run")
        if (message_ids is None) == (filter is None):
            raise InvalidInput("message_ids", "give either message_ids or a filter.")
        with self.store.read() as r:
            memory = authorised(actor, NEEDS[kind], r.memory(mid), mid)
            scope = Scope.of(memory.id)
            if message_ids is not None:
                ids = _ids(message_ids)
                found = r.get_entries(scope, ids)
                missing = [i for i in ids if i not in found]
                if missing:
                    raise NotFound(f"Messages {missing} in memory '{mid}' not found.")
            else:
                assert filter is not None
                ids = r.entry_ids(scope, turns_filter(checked(filter)))
        if dry:
            return BulkResult(kind, True, len(ids), tuple(ids))
        changed = self._apply(actor, mid, kind, ids, reason)
        return BulkResult(kind, False, len(ids), tuple(ids), tuple(sorted(changed)))

    def _apply(
        self, actor: Principal, memory_id: str, kind: BulkAction, ids: Sequence[int], reason: str
    ) -> set[int]:
        changed: set[int] = set()
        if kind is BulkAction.ERASE:
            for eid in ids:
                if eid in changed:  # erased already, with a turn or a version it came from
                    continue
                changed.update(self.lifecycle.erase(actor, memory_id, eid, reason=reason).erased)
            return changed
        single: dict[BulkAction, Callable[[int], list[int]]] = {
            BulkAction.DISABLE: lambda i: self.lifecycle.set_status(actor, memory_id, i, False),
            BulkAction.ENABLE: lambda i: self.lifecycle.set_status(actor, memory_id, i, True),
            BulkAction.FORGET: lambda i: self.lifecycle.forget(actor, memory_id, i),
            BulkAction.RESTORE: lambda i: self.lifecycle.restore(actor, memory_id, i),
            BulkAction.CONFIRM: lambda i: self._review(
                actor, memory_id, i, Trust.CONFIRMED, reason
            ),
            BulkAction.REJECT: lambda i: self._review(actor, memory_id, i, Trust.REJECTED, reason),
        }
        for eid in ids:
            changed.update(single[kind](eid))
        return changed

    def _review(
        self, actor: Principal, memory_id: str, message_id: int, verdict: Trust, reason: str
    ) -> list[int]:
        with self.store.read() as r:
            current = r.entry(Scope.of(memory_id), message_id)
        if current is not None and current.trust is verdict:
            return []
        self.lifecycle.review(actor, memory_id, message_id, verdict, reason)
        return [message_id]

    def review_queue(
        self, actor: Principal, memory_id: object, *, page: int = 1, page_size: int = 30
    ) -> ReviewPage:
        """Extracted entries nobody has confirmed or rejected yet (current, not forgotten),
        oldest first, each with the raw turn it came from."""
        mid = v.memory_id(memory_id)
        size = _page_size(page_size)
        offset = (v.page(page) - 1) * size
        with self.store.read() as r:
            memory = authorised(actor, Action.READ, r.memory(mid), mid)
            scope = Scope.of(memory.id)
            waiting, total = r.oldest_entries(scope, UNREVIEWED, limit=size, offset=offset)
            sources = r.get_entries(scope, {e.source_id for e in waiting if e.source_id})
        items = tuple(
            ReviewItem(e, None if e.source_id is None else sources.get(e.source_id))
            for e in waiting
        )
        return ReviewPage(items, total)

    def timeline(
        self, actor: Principal, memory_id: object, *, bucket: object = "day", buckets: int = 30
    ) -> Timeline:
        """Entries the memory holds (every version, forgotten and disabled ones too) by the
        ``bucket`` in which they were recorded: the last ``buckets`` of them, up to now."""
        kind = bucket_kind(bucket)
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
                f = EntryFilter(
                    current_only=False, recorded_since=start, recorded_before=start + kind.width
                )
                per_bucket.append(r.type_counts(scope, f))
        held = [t for t in EntryType if t in memory.memory_types or any(t in c for c in per_bucket)]
        counts = {t: tuple(c.get(t, 0) for c in per_bucket) for t in held}
        return Timeline(kind, starts, counts)


def checked(f: MessageFilter) -> MessageFilter:
    """``f`` with every field checked, as the Messages list checks its filters."""
    return message_filter(
        agent_ids=f.agent_ids,
        keywords=f.session_contains,
        trust=f.trust,
        user_id=f.user_id,
        session_id=f.session_id,
        types=f.types,
        status=f.status,
        forgotten=f.forgotten,
    )


def _ids(values: Sequence[object]) -> list[int]:
    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple)):
        raise InvalidInput("message_ids", "message_ids must be a list of message ids.")
    if not values or len(values) > MAX_BULK_IDS:
        raise InvalidInput("message_ids", f"message_ids must hold 1 to {MAX_BULK_IDS} ids.")
    return sorted({v.message_id(i, "message_ids") for i in values})


def _page_size(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= v.MAX_TOP_N:
        raise InvalidInput("page_size", f"page_size must be between 1 and {v.MAX_TOP_N}")
    return value

"""The request log (who read what): calls written in batches off the request path, pruned
by age and size as it grows, read back by administrators and by each user for their own.

An edge opens a :class:`~recallery.requests.requestlog.Call` per request and hands it to
:meth:`RequestLog.record` when the answer has gone; a background thread writes what has
queued up in one transaction (the request pays for a queue put). Every ``PRUNE_EVERY``
requests written, the thread drops requests older than ``request_log_days`` and all but
the newest ``request_log_max_rows`` of authenticated callers; requests without a valid key
have their own, smaller budget (:func:`anonymous_budget`), so they never push those out.

A refused request (status 400 or more) is logged as a refusal: its status, route and
memories, never the entry ids its address named or a search returned, so a caller's log
never tells which ids exist elsewhere and an entry's history counts no refusal as a read.

Who reads what: reading the log needs the ``read`` capability. An administrator's unscoped
key reads every row; any other key reads only the rows of its own user's calls (their keys'
and their web sessions'), and a scoped key only those within its scope: requests that named
memories, all of them in its scope, and its own. An entry's access history is for whoever
may read the entry: the counts are the entry's, the keys listed only the caller's own unless
they are an administrator.

Searches are noted by :meth:`RequestLog.retrieved`, a listener of the search's one
:class:`~recallery.retrieval.retrieved.Retrieved` event, the same event the use-count recorder
(:class:`~recallery.retrieval.usage.UsageRecorder`) hears, so within the log's retention an
entry's ``returned`` count equals what its use count gained over the same requests (the web
playground emits none, so it moves neither). Rows are written behind the request
(:class:`~recallery.store.writebehind.WriteBehind`), like the use counts.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import timedelta

from recallery.clock import Clock
from recallery.errors import Forbidden, RecalleryError
from recallery.models import Capability, Principal
from recallery.requests.requestlog import (
    NAMED,
    RETURNED,
    Call,
    EntryReads,
    LoggedRequest,
    RequestQuery,
    note_search,
)
from recallery.retrieval.retrieved import Retrieved
from recallery.settings import Settings
from recallery.store.base import Store
from recallery.store.requestlog import Logged
from recallery.store.writebehind import WriteBehind

#: Requests written between two prunings.
PRUNE_EVERY = 1_000


class RequestLog:
    """Queues calls and writes them from one background thread."""

    def __init__(self, store: Store, clock: Clock, settings: Settings) -> None:
        self.store = store
        self.clock = clock
        self.settings = settings
        self._behind: WriteBehind[Logged] = WriteBehind("requests", self._write)
        self._since_prune = PRUNE_EVERY  # the first batch prunes

    @property
    def enabled(self) -> bool:
        return self.settings.request_log

    def record(self, call: Call, status: int, latency_ms: float) -> None:
        """Queue ``call``, answered with ``status`` after ``latency_ms``."""
        if not self.enabled:
            return
        refused = status >= 400
        row = LoggedRequest(
            id=uuid.uuid4().hex,
            at=self.clock.now(),
            channel=call.channel,
            route=call.route,
            status=status,
            latency_ms=round(latency_ms, 3),
            key_id=call.key_id,
            user_id=call.user_id,
            memory_ids=tuple(sorted(call.memory_ids)),
            query=call.query if self.settings.request_log_queries else None,
        )
        returned, named = ((), ()) if refused else (tuple(call.returned), tuple(call.named))
        self._behind.put((call.tenant_id, row, returned, named))

    def retrieved(self, event: Retrieved) -> None:
        """A search's listener: its query, memories and returned ids, noted into the
        current call (none outside a call: nothing is logged then)."""
        note_search(event.query, event.memory_ids, event.entry_ids)

    def flush(self) -> None:
        """Wait until everything recorded so far is written."""
        self._behind.flush()

    def close(self) -> None:
        self._behind.close()

    def prune(self) -> int:
        """Drop what retention no longer keeps now; how many requests went."""
        before = self.clock.now() - timedelta(days=self.settings.request_log_days)
        with self.store.write() as w:
            keep = self.settings.request_log_max_rows
            return w.prune_requests(before, keep, anonymous_budget(keep))

    def requests(self, actor: Principal, q: RequestQuery) -> tuple[list[LoggedRequest], int]:
        """Logged requests matching ``q``, newest first, and how many match: every caller's
        for an administrator's unscoped key, else the caller's own within its key's scope."""
        if Capability.READ not in actor.capabilities:
            raise Forbidden("the API key lacks the 'read' capability (to read the request log)")
        if not _reads_all(actor):
            if q.user_id not in (None, actor.user_id):
                raise Forbidden(
                    "only an administrator (with an unscoped key) reads other users' requests"
                )
            q = replace(q, user_id=actor.user_id, within=actor.scope, own_key=actor.key_id)
        with self.store.read() as r:
            return r.requests(q)

    def entry_reads(self, actor: Principal, message_id: int, use_count: int) -> EntryReads:
        """The access history of an entry the caller has read already (the engine checks)."""
        with self.store.read() as r:
            how, by_key = r.entry_reads(message_id)
        last = max((k.last_at for k in by_key), default=None)
        if not _reads_all(actor):
            by_key = [k for k in by_key if k.user_id == actor.user_id]
        return EntryReads(
            message_id, how.get(RETURNED, 0), how.get(NAMED, 0), tuple(by_key), use_count, last
        )

    def _write(self, batch: list[Logged]) -> None:
        try:
            with self.store.write() as w:
                w.log_requests(batch)
        except RecalleryError:
            # PostgreSQL: an entry erased between the insert's read and its foreign-key
            # check fails the batch; written again, the insert no longer finds the entry.
            with self.store.write() as w:
                w.log_requests(batch)
        self._since_prune += len(batch)
        if self._since_prune >= PRUNE_EVERY:
            self._since_prune = 0
            self.prune()


def anonymous_budget(max_rows: int) -> int:
    """How many requests without a valid key the log keeps: a tenth of its size."""
    return max(1, max_rows // 10)


def _reads_all(actor: Principal) -> bool:
    """An administrator's unscoped key reads every caller's rows."""
    return actor.is_admin and actor.scope is None


__all__ = ["RequestLog", "anonymous_budget"]

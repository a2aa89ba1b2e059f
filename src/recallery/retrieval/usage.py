"""Retrieval statistics (``last_used_at``, ``use_count``) written off the request path.

A :class:`UsageRecorder` listens for a search's :class:`~recallery.retrieval.retrieved.Retrieved`
and writes the ids behind the request (:class:`~recallery.store.writebehind.WriteBehind`),
each batch summed into one count and one latest use per entry.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from recallery.retrieval.retrieved import Retrieved
from recallery.store.base import Store
from recallery.store.writebehind import WriteBehind

_Uses = tuple[list[int], datetime]


class UsageRecorder:
    """Collects retrieved ids and writes them in batches from one background thread."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._behind: WriteBehind[_Uses] = WriteBehind("usage", self._write)

    def retrieved(self, event: Retrieved) -> None:
        """A search's listener: each entry it returned is used once more, at its time."""
        if event.entry_ids:
            self._behind.put((list(event.entry_ids), event.at))

    def flush(self) -> None:
        """Wait until everything recorded so far is written."""
        self._behind.flush()

    def close(self) -> None:
        self._behind.close()

    def _write(self, batch: list[_Uses]) -> None:
        counts: Counter[int] = Counter()
        last: dict[int, datetime] = {}
        for ids, at in batch:
            for i in ids:
                counts[i] += 1
                last[i] = max(at, last.get(i, at))
        with self._store.write() as w:
            w.record_use(counts, last)


__all__ = ["UsageRecorder"]

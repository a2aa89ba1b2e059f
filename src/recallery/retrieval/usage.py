"""Retrieval statistics (``last_used_at``, ``use_count``) written off the request path."""

from __future__ import annotations

import logging
import queue
import threading
from collections import Counter
from collections.abc import Sequence
from datetime import datetime

from recallery.errors import RecalleryError
from recallery.store.base import Store

log = logging.getLogger(__name__)


class UsageRecorder:
    """Collects retrieved ids and writes them in batches from one background thread."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._queue: queue.Queue[tuple[list[int], datetime] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def record(self, ids: Sequence[int], at: datetime) -> None:
        if not ids:
            return
        self._ensure_thread()
        self._queue.put((list(ids), at))

    def flush(self) -> None:
        """Wait until everything recorded so far is written."""
        if self._thread is not None:
            self._queue.join()

    def close(self) -> None:
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None

    def _ensure_thread(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="usage", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                self._queue.task_done()
                return
            batch = [item]
            while not self._queue.empty():
                more = self._queue.get_nowait()
                if more is None:
                    self._queue.put(None)
                    self._queue.task_done()
                    break
                batch.append(more)
            try:
                self._write(batch)
            except RecalleryError:
                log.exception("could not record retrieval statistics for %d searches", len(batch))
            finally:
                for _ in batch:
                    self._queue.task_done()

    def _write(self, batch: list[tuple[list[int], datetime]]) -> None:
        counts: Counter[int] = Counter()
        last: dict[int, datetime] = {}
        for ids, at in batch:
            for i in ids:
                counts[i] += 1
                last[i] = max(at, last.get(i, at))
        with self._store.write() as w:
            w.record_use(counts, last)

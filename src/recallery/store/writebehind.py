"""Writes that a request should not wait for, made later from one background thread.

Two things a request did are written behind it: the use counts of the entries a search
returned (:class:`~recallery.retrieval.usage.UsageRecorder`, LRU eviction's order) and the
request log (:class:`~recallery.services.requestlog.RequestLog`). Each hands its items to a
:class:`WriteBehind`, so the request pays for a queue put; the thread takes what has queued
up (at most ``batch`` items) and writes it with the owner's ``write`` in one go. A batch
whose write fails, with any exception (a store error, a driver's, a bug), is logged and
dropped, and the thread goes on with the next: one bad batch never stops the writes behind
every later request, nor leaves :meth:`WriteBehind.flush` waiting for a thread that is gone.
:meth:`WriteBehind.flush` waits until everything put so
far is written (tests, a backup); :meth:`WriteBehind.close` writes the rest and stops.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")
#: Most items one write takes.
BATCH = 500


class WriteBehind(Generic[T]):
    """Items put by requests, written in batches by ``write`` from one thread named
    ``name`` (started at the first put; ``None`` is not an item: it stops the thread)."""

    def __init__(self, name: str, write: Callable[[list[T]], None], *, batch: int = BATCH) -> None:
        if batch < 1:
            raise ValueError("batch must be at least 1")
        self.name = name
        self.batch = batch
        self._write = write
        self._queue: queue.Queue[T | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def put(self, item: T) -> None:
        """Queue ``item`` for the next batch."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()
            self._queue.put(item)

    def flush(self) -> None:
        """Wait until everything put so far is written (or logged as failed)."""
        if self._thread is not None:
            self._queue.join()

    def close(self) -> None:
        """Write what is queued, then stop the thread (a later put starts another)."""
        with self._lock:
            if self._thread is not None:
                self._queue.put(None)
                self._thread.join()
                self._thread = None

    def _run(self) -> None:
        stop = False
        while not stop:
            batch, stop = self._take()
            try:
                if batch:
                    self._write(batch)
            except Exception:  # logged: the thread must outlive any batch
                log.exception("%s: could not write a batch of %d", self.name, len(batch))
            finally:
                for _ in range(len(batch) + stop):
                    self._queue.task_done()

    def _take(self) -> tuple[list[T], bool]:
        """The next batch (waiting for its first item): what has queued up, at most
        :attr:`batch` items; and whether :meth:`close` asked the thread to stop."""
        first = self._queue.get()
        if first is None:
            return [], True
        batch = [first]
        while len(batch) < self.batch:
            try:
                more = self._queue.get_nowait()
            except queue.Empty:
                break
            if more is None:
                return batch, True
            batch.append(more)
        return batch, False


__all__ = ["BATCH", "WriteBehind"]

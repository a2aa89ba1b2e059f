"""Scrubbing erased text out of the SQLite store's files, without ever waiting for a reader.

After a transaction that erases commits, the erased rows can still be read in two places:
in the WAL (frames written before the erasure, not yet checkpointed) and in the main file
(until a checkpoint writes the erasure's pages over it; ``secure_delete`` zeroes what a
deletion frees), and the trigram index keeps their pieces until its segments merge
(:mod:`.substrings`). ``wal_checkpoint(TRUNCATE)`` folds every frame into the main file and
empties the WAL, but it cannot finish while another connection, in this process or another
(a worker, a long ``recallery backup``, an ``sqlite3`` shell), has a read transaction open:
with a busy timeout it would wait for that reader while holding the database's write lock,
so every writer would wait too, and then give up.

So a scrub here never waits: it tries the checkpoint once with a busy timeout of 0. When a
reader is in the way the scrub stays *due*, and the store completes it at the next
opportunity: after each later write transaction commits, at each ``scrub()`` call, at
``close()``, and when a process opens the store. Due is also a marker file beside the
database (``recallery.db.scrub``, no content), made before the erasing transaction commits,
so a process that stops before the scrub completes leaves it to the next one that opens the
store. The store runs this after every transaction that erases (:meth:`Scrubs.erasing`),
so no caller has to remember it; ``scrub()`` stays public, and is cheap when nothing is due.
"""

from __future__ import annotations

from pathlib import Path

from recallery.store.sql import Conn
from recallery.store.sqlite import substrings
from recallery.store.sqlite.copies import MARKER, owner_only


class Scrubs:
    """What is due to make a store's files clean of deleted rows, and the tries to do it."""

    def __init__(self, path: Path, busy_timeout_ms: int) -> None:
        self.marker = path.with_name(path.name + MARKER)
        self._busy_timeout_ms = busy_timeout_ms
        recorded = self.marker.exists()  # a process stopped before its scrub completed
        #: Rows were deleted since the last merge / the last complete checkpoint.
        self._merge = self._checkpoint = recorded
        #: An erasure's scrub is due: try again after every commit until it completes.
        self.retry = recorded

    @property
    def due(self) -> bool:
        return self._merge or self._checkpoint

    def deleting(self) -> None:
        """Entry rows are being deleted (erased or evicted): an explicit scrub has work."""
        self._merge = self._checkpoint = True

    def erasing(self) -> None:
        """The open transaction erases: its scrub is due once it commits. The marker is
        made now, ahead of the commit, as the erasure ledger is written."""
        if not self.retry:
            owner_only(self.marker)
            self.retry = True
        self.deleting()

    def attempt(self, conn: Conn) -> bool:
        """Try to complete what is due on the store's writer connection ``conn`` (outside a
        transaction); True when the files are clean of every row deleted so far."""
        if self._merge:
            substrings.merge(conn)
            self._merge = False
        if self._checkpoint:
            conn.execute("PRAGMA busy_timeout = 0")
            try:
                busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")[0][0]
            finally:
                conn.execute(f"PRAGMA busy_timeout = {self._busy_timeout_ms}")
            if busy:
                return False  # a reader is in the way: due until the next opportunity
            self._checkpoint = False
        if self.retry:
            self.marker.unlink(missing_ok=True)
            self.retry = False
        return True


__all__ = ["MARKER", "Scrubs"]

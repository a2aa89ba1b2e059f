"""The embedded default store: one SQLite file in WAL mode, searched through in-process indexes.

One writer at a time (``BEGIN IMMEDIATE``, so capacity checks are exact even across
processes), any number of readers. ``secure_delete`` is on and the store scrubs its files after
every transaction that erases (:mod:`.scrubbing`: never waiting for a reader; due until done),
so erased text does not survive in them. Its files are created owner-only (0600, 0700).

Search reads four indexes this process keeps beside the file, caught up together once per
read before they are used: BM25 postings per memory (:mod:`.keywords`), float32 vectors per
memory with an HNSW index past a size threshold (:mod:`.vectors`, :mod:`.ann`), raw turns by
conversation (:mod:`.conversations`) and every entry's filter columns (:mod:`.columns`). New
rows lie above a message-id high-water mark (committed ids form a prefix); rows changed or
erased since, by this process or another, are named by the change log (``entry_changes``,
written by triggers) above a sequence mark. Only committed state is ever read into them: a
search inside a write transaction catches up through a read connection and checks its
candidates in SQL, so rows of a transaction that rolls back never reach an index. The file
stays the one truth: a process closing after it read many rows, built an HNSW index or
erased rows snapshots the indexes into the file (:mod:`.snapshots`), and the next one starts
from there; erasing an entry drops its memory's snapshots in the same transaction.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from recallery.errors import StoreError
from recallery.models import Scope
from recallery.store.base import Store
from recallery.store.erasures import ErasureLedger
from recallery.store.filters import EntryFilter
from recallery.store.neighbours import Near
from recallery.store.queries import Passing
from recallery.store.sql import Conn
from recallery.store.sqlite import copies, substrings
from recallery.store.sqlite.columns import HeldCheck
from recallery.store.sqlite.connections import BUSY_TIMEOUT_MS, RawConn, connect, statements
from recallery.store.sqlite.copies import SIDE_FILES, owner_only
from recallery.store.sqlite.indexes import BY_ID, Indexes, prune_changes
from recallery.store.sqlite.lockfile import StoreLock
from recallery.store.sqlite.migrations import MIGRATIONS
from recallery.store.sqlite.ranking import best_passing
from recallery.store.sqlite.scrubbing import Scrubs
from recallery.store.sqlite.vectors import ANN_THRESHOLD, VectorCache
from recallery.store.steps import Handover, KeywordStep
from recallery.store.supersession import read_again_later, reslot

#: Rows read from the file (not from a snapshot) from which closing writes a snapshot.
SNAPSHOT_ROWS = 50_000
#: Write transactions between two prunings of the change log (:func:`.indexes.prune_changes`).
PRUNE_EVERY = 1_000


class SQLiteStore(Store):
    name = "sqlite"
    latest_schema = MIGRATIONS[-1][0]
    #: Candidate checks read only filter columns: from this index they skip the rows' text
    #: and vector (0.9 -> 0.56 ms per 200 ids at 1M entries); a turn's extracts, its own.
    entries_by_id, entries_by_source = BY_ID, "entries e INDEXED BY entries_source"
    keyword_windows = True
    legs_in_process = True

    def __init__(
        self,
        path: str | Path,
        *,
        ann_threshold: int = ANN_THRESHOLD,
        snapshot_rows: int = SNAPSHOT_ROWS,
        erasures: ErasureLedger | None = None,
        lock: bool = True,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
    ) -> None:
        """``ann_threshold``: vectors from which a memory is also searched through an
        approximate (HNSW) index; 0 or less keeps every search exact. ``snapshot_rows``:
        rows read from the file from which :meth:`close` snapshots the indexes (0: never).
        ``erasures``: the ledger erasures are entered in; ``lock``: hold :mod:`.lockfile`'s lock;
        ``busy_timeout_ms``: how long a connection waits for another's write lock."""
        self.path = Path(path)
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        owner_only(self.path)  # SQLite gives its WAL and shared memory the file's mode
        self.erasures = erasures
        self._busy_timeout_ms = busy_timeout_ms
        self._lock = StoreLock(self.path, exclusive=False) if lock else None  # see .lockfile
        self._local = threading.local()
        self._write_lock = threading.RLock()
        self._writer = self._connect()
        self._all: list[sqlite3.Connection] = [self._writer]
        self._all_lock = threading.Lock()
        self._indexes = Indexes(VectorCache(ann_threshold, apart=True))
        self._snapshot_rows = snapshot_rows
        self._erased_in_transaction = False
        self._writes = 0
        self._scrubs = Scrubs(self.path, busy_timeout_ms)
        self.migrate()
        self.scrub()  # one a process that stopped left due (its marker), if any

    # --- connections ----------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        return connect(self.path, self._busy_timeout_ms)

    def _reader(self) -> sqlite3.Connection:
        raw: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if raw is None:
            raw = self._connect()
            self._local.conn = raw
            with self._all_lock:
                self._all.append(raw)
        return raw

    @contextmanager
    def _read_conn(self) -> Iterator[Conn]:
        raw = self._reader()
        if raw.in_transaction:  # nested read in the same thread: reuse the snapshot
            yield RawConn(raw)
            return
        raw.execute("BEGIN")
        try:
            yield RawConn(raw)
        finally:
            raw.execute("COMMIT")

    @contextmanager
    def _write_conn(self) -> Iterator[Conn]:
        with self._write_lock:
            raw = self._writer
            if raw.in_transaction:  # nested write in the same thread joins the transaction
                yield RawConn(raw)
                return
            raw.execute("BEGIN IMMEDIATE")
            try:
                yield RawConn(raw)
                self._writes += 1
                if self._writes % PRUNE_EVERY == 0:
                    prune_changes(RawConn(raw))
            except BaseException:
                raw.execute("ROLLBACK")
                self._erased_in_transaction = False
                raise
            raw.execute("COMMIT")
            if self._erased_in_transaction:  # erased rows leave this process's memory now
                self._erased_in_transaction = False
                with self._read_conn() as conn:
                    self._catch_up(conn)
            if self._scrubs.retry:  # an erasure's scrub is due: this is an opportunity
                with contextlib.suppress(StoreError):  # committed: a failed try stays due
                    self._scrubs.attempt(RawConn(raw))

    def save_indexes(self) -> int:
        """Snapshot the in-process indexes into the file (:mod:`.snapshots`); bytes written."""
        with self._write_conn() as write, self._read_conn() as read:
            return self._indexes.save(write, read)

    def close(self) -> None:
        """Close every connection; first snapshot the indexes and scrub, where due."""
        # busy or read-only: the next process rebuilds from the rows, or scrubs, instead
        if self._snapshot_rows > 0 and self._all and self._indexes.due(self._snapshot_rows):
            with contextlib.suppress(StoreError, sqlite3.Error):
                self.save_indexes()
        if self._all:
            with contextlib.suppress(StoreError, sqlite3.Error):
                self.scrub()
        with self._all_lock:
            for raw in self._all:
                raw.close()
            self._all.clear()
        if self._lock is not None:
            self._lock.release()

    # --- migrations -----------------------------------------------------------------------

    def migrate(self) -> None:
        with self._write_lock:
            raw = self._writer
            raw.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations "
                "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
            )
            done = {r[0] for r in raw.execute("SELECT version FROM schema_migrations")}
            later = read_again_later(MIGRATIONS, done, reslot)
            for version, name, script in MIGRATIONS:
                if version in done:
                    continue
                raw.execute("BEGIN IMMEDIATE")
                try:
                    if not callable(script):
                        for statement in statements(script):
                            raw.execute(statement)
                    elif version not in later:
                        script(RawConn(raw))
                    raw.execute(
                        "INSERT INTO schema_migrations VALUES (?, ?, datetime('now'))",
                        (version, name),
                    )
                except BaseException:
                    raw.execute("ROLLBACK")
                    raise
                raw.execute("COMMIT")

    def schema_version(self) -> int:
        rows = self._writer.execute("SELECT max(version) FROM schema_migrations").fetchall()
        return int(rows[0][0] or 0)

    # --- primitives -----------------------------------------------------------------------

    def lock_memory(self, conn: Conn, memory_id: str) -> None:
        """Nothing to do: ``BEGIN IMMEDIATE`` already holds the database's write lock."""

    def encode_vector(self, vector: NDArray[np.float32]) -> object:
        return np.ascontiguousarray(vector, dtype=np.float32).tobytes()

    def decode_vector(self, value: Any) -> NDArray[np.float32]:
        return np.frombuffer(value, dtype=np.float32).copy()

    def keyword_search(
        self, conn: Conn, scope: Scope, text: str, f: EntryFilter, limit: int, passing: Passing
    ) -> list[tuple[int, float]]:
        """BM25 with the statistics of the memories searched (N, df, average length), best
        first, from the in-process index (:mod:`.keywords`); ``passing`` (the filter check)
        then runs on the best rows, widening until ``limit`` pass."""
        return self.keyword_window_search(conn, scope, text, f, limit, 0, passing).keyword

    def window_search(
        self, conn: Conn, scope: Scope, text: str, f: EntryFilter, limit: int, passing: Passing
    ) -> list[tuple[int, float]]:
        """BM25 of conversation windows, from the in-process index: the best windows of
        rows that pass; a window turn that the filter hides is then left out of the windows
        of the rows returned."""
        return self.keyword_window_search(conn, scope, text, f, 0, limit, passing).windows

    def keyword_window_search(
        self,
        conn: Conn,
        scope: Scope,
        text: str,
        f: EntryFilter,
        limit: int,
        windows: int,
        passing: Passing,
        vector: Handover | None = None,
    ) -> KeywordStep:
        """Both from one read of the index's postings (cosines are read in process after)."""
        self._catch_up(conn)
        memories = sorted(scope.memory_ids)
        index = self._indexes.keywords
        own, held = index.both(memories, text, own=limit > 0, windows=windows > 0)
        matches = best_passing(*own, limit, passing) if len(own[0]) else []
        if not len(held[0]):
            return KeywordStep(matches, [])
        best = best_passing(*held, windows, passing)
        lent = index.windows(memories, [i for i, _ in best])
        lenders = {m for turns in lent.values() for m in turns}
        shown = passing(sorted(lenders)) if lenders else set()
        hidden = {i: set(turns) - shown for i, turns in lent.items() if set(turns) - shown}
        if not hidden:
            return KeywordStep(matches, best)
        fixed = index.rescored(memories, text, hidden)
        rescored = [(i, fixed.get(i, s)) for i, s in best]
        return KeywordStep(
            matches, sorted((x for x in rescored if x[1] > 0), key=lambda x: (-x[1], -x[0]))
        )

    def conversation_near(
        self, conn: Conn, scope: Scope, ids: Sequence[int], reach: int
    ) -> dict[int, Near]:
        """From the in-process conversation index (:mod:`.conversations`)."""
        self._catch_up(conn)
        return self._indexes.conversations.near(sorted(scope.memory_ids), ids, reach)

    def vector_search(
        self,
        conn: Conn,
        scope: Scope,
        vector: NDArray[np.float32],
        f: EntryFilter,
        limit: int,
        passing: Passing,
    ) -> list[tuple[int, float]]:
        """Cosine over the scope's vectors, best first: exact, or through a memory's
        approximate index past ``ann_threshold``. ``passing`` (the filter check) runs on the
        best candidates only, widening until ``limit`` pass or every vector was considered."""
        self._catch_up(conn)

        def rank(ids: NDArray[np.int64], sims: NDArray[np.float32]) -> list[tuple[int, float]]:
            return best_passing(ids, sims, limit, passing)

        allowed = passing.mask if isinstance(passing, HeldCheck) else None
        return self._indexes.vectors.search(sorted(scope.memory_ids), vector, limit, rank, allowed)

    def warm(self) -> None:
        """Catch the in-process indexes up with the file (1M entries: a minute; HNSW after)."""
        with self._read_conn() as conn:
            self._catch_up(conn)

    def _catch_up(self, conn: Conn) -> None:
        """Bring the in-process indexes up to the committed state, once per transaction. A
        write transaction's own rows are never read: its connection catches up through a
        read connection instead, so a rollback leaves no row behind in an index."""
        if not isinstance(conn, RawConn) or conn.caught_up:
            return
        if conn.raw is self._writer:
            with self._read_conn() as committed:
                self._catch_up(committed)
        else:
            self._indexes.catch_up(conn)
        conn.caught_up = True

    def held_filter(self, conn: Conn, scope: Scope, f: EntryFilter) -> Passing | None:
        """The filter check from the in-process columns (:mod:`.columns`), caught up with
        the committed state; None inside a write transaction (its own changes are checked in
        SQL) or for a filter the columns cannot answer."""
        if not isinstance(conn, RawConn) or conn.raw is self._writer:
            return None
        self._catch_up(conn)
        return self._indexes.columns.passing(scope.memory_ids, f)

    def held_lengths(self, conn: Conn, scope: Scope, ids: Iterable[int]) -> dict[int, int] | None:
        """From the in-process conversation index (:mod:`.conversations`), as
        :meth:`held_filter` is answered."""
        if not isinstance(conn, RawConn) or conn.raw is self._writer:
            return None
        self._catch_up(conn)
        return self._indexes.conversations.lengths(scope.memory_ids, ids)

    def held_times(
        self, conn: Conn, scope: Scope, ids: Iterable[int]
    ) -> list[tuple[int, float, str, str]] | None:
        """From the in-process filter columns (:mod:`.columns`), as :meth:`held_filter` is
        answered."""
        if not isinstance(conn, RawConn) or conn.raw is self._writer:
            return None
        self._catch_up(conn)
        return self._indexes.columns.valid_times(sorted(scope.memory_ids), ids)

    def narrowed(self, conn: Conn, f: EntryFilter) -> EntryFilter:
        return substrings.narrowed(conn, f)  # the trigram index of extracted text

    def vectors_of(
        self, conn: Conn, ids: Sequence[int], memory_ids: Collection[str] | None = None
    ) -> dict[int, NDArray[np.float32]]:
        """From the in-process vector cache; rows it does not hold (a vector of another
        dimension than its memory's) are read from the file."""
        self._catch_up(conn)
        found = self._indexes.vectors.vectors(ids, memory_ids)
        missing = [i for i in ids if i not in found]
        return found | (super().vectors_of(conn, missing, memory_ids) if missing else {})

    def cosines_of(
        self,
        conn: Conn,
        ids: Sequence[int],
        vector: NDArray[np.float32],
        memory_ids: Collection[str] | None = None,
    ) -> dict[int, float]:
        """From the in-process vector cache, one matrix product per memory; rows it does not
        hold are read from the file."""
        self._catch_up(conn)
        found = self._indexes.vectors.cosines(ids, vector, memory_ids)
        missing = [i for i in ids if i not in found]
        return found | (super().cosines_of(conn, missing, vector, memory_ids) if missing else {})

    def vectors_indexed(self, memory_id: str) -> int | None:
        """Rows of the memory's vectors that its approximate index covers (it is built in
        the background once the memory reaches ``ann_threshold``); None while it has none."""
        return self._indexes.vectors.indexed(memory_id)

    def entries_deleting(self, conn: Conn, ids: Sequence[int]) -> None:
        """Once the transaction commits, the rows leave the in-process indexes at once (the
        change log names them); should it roll back, they stay."""
        self._erased_in_transaction = True
        self._scrubs.deleting()

    def reserve_ids(self, conn: Conn, through: int) -> None:
        copies.reserve_ids(conn, through)

    def erasing(self, conn: Conn) -> None:
        """The transaction erases: the store scrubs once it commits (:mod:`.scrubbing`)."""
        self._scrubs.erasing()

    def files(self) -> list[Path]:
        """The database file and its WAL and shared-memory files, where they exist."""
        candidates = [self.path, *(self.path.with_name(self.path.name + s) for s in SIDE_FILES)]
        return [p for p in candidates if p.exists()]

    def scrub(self) -> bool:
        """Complete what is due to make the files clean of deleted rows, without waiting
        for readers (:mod:`.scrubbing`); True when they are clean now, False when it is
        still due (a reader is in the way, or a write transaction is open here)."""
        with self._write_lock:
            if not self._scrubs.due:
                return True
            return not self._writer.in_transaction and self._scrubs.attempt(RawConn(self._writer))

"""The SQLite store's four in-process indexes, and how they are kept current with the file.

New rows lie above each index's message-id high-water mark (committed ids form a prefix);
rows changed or erased since, by this process or any other, are named by the change log
(``entry_changes``, written by triggers) above a sequence mark. :meth:`Indexes.catch_up`
reads both from one committed snapshot under one lock, so every index moves together and
never backwards, and an entry another process erased stops counting (in BM25 statistics,
vectors, conversations and filter checks) from this process's next search on.

A new process starts from the snapshots stored in the file (:mod:`.snapshots`) where there
are some: their memories' keyword, conversation, filter and HNSW state as of the snapshot's
marks, every other memory from its rows up to those marks; vectors always come from the rows.
From the marks on, catching up is the same as ever.

The change log is pruned as it grows (:func:`prune_changes`): the newest
:data:`CHANGES_KEPT` changes stay, and never one the stored snapshots still need. A process
whose mark is behind what was pruned has missed changes it can no longer read, so it starts
over, as a new process would.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np
from numpy.typing import NDArray

from recallery.store.sql import Conn, Row, chunks, marks
from recallery.store.sqlite import snapshots
from recallery.store.sqlite.catchup import LOAD_CHUNK
from recallery.store.sqlite.columns import COLUMNS, FilterColumns
from recallery.store.sqlite.columns import Row as FilterRow
from recallery.store.sqlite.conversations import ConversationIndex, Turn
from recallery.store.sqlite.keywords import KeywordIndex
from recallery.store.sqlite.vectors import VectorCache

#: Rows looked up by id through the covering filter index (see migration 5).
BY_ID = "entries e INDEXED BY entries_filter"
#: Vector rows read per statement: a tenth of a chunk, so that the blobs' bytes objects (1.5 kB
#: each, outside Python's small-object arenas) leave the heap no larger than that.
VECTOR_CHUNK = LOAD_CHUNK // 10
#: Page cache of a first load (negative: KiB), which reads every row once.
SCAN_CACHE = -2048
#: Changes the log keeps when pruned: a process further behind starts its indexes over.
CHANGES_KEPT = 100_000
#: The newest change ever logged (the log may be pruned empty), and how far it was pruned.
_CHANGES = (
    "max(coalesce((SELECT max(seq) FROM entry_changes), 0),"
    " (SELECT through FROM entry_changes_pruned)), (SELECT through FROM entry_changes_pruned)"
)
Only = NDArray[np.int64] | None
"""Load only the rows of these ids, ascending (None: every row)."""


class Indexes:
    """BM25 postings, vectors, conversations and filter columns of every memory."""

    def __init__(self, vectors: VectorCache) -> None:
        self.vectors = vectors
        self.keywords = KeywordIndex()
        self.conversations = ConversationIndex()
        self.columns = FilterColumns()
        self._changes_seen = 0
        self._rows_seen = 0
        self._lock = threading.Lock()
        self._started = False
        #: Rows read from the file (not from a snapshot) since the last snapshot.
        self.rows_loaded = 0
        #: Memories whose HNSW index the stored snapshot holds.
        self.graphs_stored: set[str] = set()
        #: Whether rows were erased since the last snapshot.
        self.erased = False

    def catch_up(self, conn: Conn) -> None:
        """Rows above the high-water marks, then the rows the change log names since the
        last catch-up: erased ones leave every index, changed ones get their filter columns
        again. ``conn`` must read committed state only (never a write transaction's). One
        query finds out whether anything is new; most searches stop there, without the lock."""
        newest, changed, pruned = conn.execute(
            f"SELECT (SELECT max(message_id) FROM entries), {_CHANGES}"
        )[0]
        behind = self._started and pruned > self._changes_seen
        if not behind and (newest or 0) <= self._rows_seen and changed <= self._changes_seen:
            return
        with self._lock:
            if self._started and pruned > self._changes_seen:
                self._forget()  # changes it missed were pruned: start over
            if self._started:
                self._sync(conn)
            else:
                with _small_cache(conn):
                    self._start(conn, changed)
                    self._sync(conn)
            self._rows_seen = max(self._rows_seen, newest or 0)

    def _forget(self) -> None:
        """Drop every index's state, for a start from the file."""
        self.vectors = self.vectors.emptied()
        self.keywords, self.conversations = KeywordIndex(), ConversationIndex()
        self.columns = FilterColumns()
        self._changes_seen = self._rows_seen = 0
        self._started = False

    def _start(self, conn: Conn, changed: int) -> None:
        """The first catch-up: from the stored snapshots (HNSW graphs first, so their bytes
        are freed before the vectors load), every other memory from its rows up to their
        marks; each memory's vectors go into one allocation of its entry count. Without
        snapshots every row is read as it stands in this transaction, which already shows
        every change up to ``changed``, the newest: the log is read from there."""
        self._started = True
        counts = conn.execute("SELECT id, entry_count FROM memories")
        self.vectors.expect({str(m): int(n) for m, n in counts})
        graphs = snapshots.load(conn, ["ann"])
        self.vectors.restore(graphs.of("ann"))
        self.graphs_stored = set(graphs.of("ann"))
        del graphs
        snap = snapshots.load(conn, ["keywords", "conversations", "columns"])
        if not snap.memories:
            self._changes_seen = changed
            return
        kept = snap.of("keywords")
        keep, high = kept.keys(), snap.rows_high
        rows, turns = _ids_of(conn, [str(m) for m, _ in counts if m not in keep], high)
        self.keywords.restore(kept, high, lambda h: self._counted(_texts_after(conn, h, rows)))
        self.conversations.restore(
            {m: a for m, a in snap.of("conversations").items() if m in keep},
            high,
            lambda h: _turns_after(conn, h, turns),
        )
        self.columns.restore(
            {m: a for m, a in snap.of("columns").items() if m in keep},
            high,
            lambda h: _columns_after(conn, h, rows),
        )
        self._changes_seen = snap.changes_seq

    def save(self, write: Conn, read: Conn) -> int:
        """Replace the stored snapshots with this process's state of every memory, erased
        rows left out; HNSW graphs only of memories that lost no row (a graph keeps what it
        removed). ``write``: a write transaction that has written nothing yet; ``read``: a
        read transaction begun after it, so both see the same state, which the indexes catch
        up with first. Returns the bytes written."""
        with self._lock:
            if not self._started:
                self._start(read, int(read.execute(f"SELECT {_CHANGES}")[0][0]))
            self._sync(read)
            newest = read.execute("SELECT max(message_id) FROM entries")[0][0]
            self._rows_seen = max(self._rows_seen, newest or 0)
            graphs: set[str] = set()
            written = snapshots.save(
                write, self._rows_seen, self._changes_seen, self._states(graphs)
            )
            self.rows_loaded, self.graphs_stored, self.erased = 0, graphs, False
            return written

    def _states(self, graphs: set[str]) -> Iterator[tuple[str, str, snapshots.Arrays]]:
        """Each memory's state of each index, one at a time (only one is held at once);
        adds the memories whose HNSW graph it yields to ``graphs``."""
        for m, a in self.keywords.snapshot().items():
            yield m, "keywords", a
        yield from ((m, "conversations", a) for m, a in self.conversations.snapshot().items())
        yield from ((m, "columns", a) for m, a in self.columns.snapshot().items())
        for m, a in self.vectors.snapshot(self.keywords.whole()):
            graphs.add(m)
            yield m, "ann", a

    def due(self, rows: int) -> bool:
        """Whether a snapshot is worth writing: at least ``rows`` rows were read from the
        file since the last one, or an erasure (which drops its memory's snapshot) came with
        that many held, or an HNSW index was built that it does not hold."""
        if self.rows_loaded >= rows or (self.erased and self.keywords.rows() >= rows):
            return True
        built = {m for m in self.keywords.whole() if self.vectors.indexed(m) is not None}
        return bool(built - self.graphs_stored)

    def _sync(self, conn: Conn) -> None:
        self.keywords.sync(lambda high: self._counted(_texts_after(conn, high)))
        self.vectors.sync(lambda high: _vectors_after(conn, high))
        self.conversations.sync(lambda high: _turns_after(conn, high))
        self.columns.sync(lambda high: _columns_after(conn, high))
        while changed := conn.execute(
            "SELECT seq, message_id FROM entry_changes WHERE seq > ? ORDER BY seq LIMIT ?",
            [self._changes_seen, LOAD_CHUNK],
        ):
            self._apply_changes(conn, sorted({int(r[1]) for r in changed}))
            self._changes_seen = int(changed[-1][0])

    def _counted(
        self, rows: list[tuple[int, str, str, str | None]]
    ) -> list[tuple[int, str, str, str | None]]:
        self.rows_loaded += len(rows)
        return rows

    def _apply_changes(self, conn: Conn, ids: list[int]) -> None:
        rows: list[FilterRow] = []
        for chunk in chunks(ids, 10_000):
            rows += _filter_rows(
                conn.execute(
                    f"SELECT {COLUMNS} FROM {BY_ID} WHERE e.message_id IN ({marks(len(chunk))})",
                    chunk,
                )
            )
        gone = sorted(set(ids) - {r[0] for r in rows})
        self.columns.refresh(rows, gone)
        if gone:
            self.erased = True
            self.vectors.drop(gone)
            self.keywords.drop(gone)
            self.conversations.drop(gone)


def prune_changes(conn: Conn, kept: int | None = None) -> None:
    """Drop the change log's rows older than its newest ``kept`` (default
    :data:`CHANGES_KEPT`) and than the stored snapshots' mark (a process starting from them
    reads the log from there), and record how far it was pruned. ``conn`` must be in a
    write transaction."""
    kept = CHANGES_KEPT if kept is None else kept
    conn.execute(
        "UPDATE entry_changes_pruned SET through = max(through, min("
        "coalesce((SELECT max(seq) FROM entry_changes), 0) - ?,"
        " coalesce((SELECT min(changes_seq) FROM index_snapshots), 9223372036854775807)))",
        [kept],
    )
    conn.execute(
        "DELETE FROM entry_changes WHERE seq <= (SELECT through FROM entry_changes_pruned)"
    )


@contextmanager
def _small_cache(conn: Conn) -> Iterator[None]:
    """A first load reads the whole file once: through a small page cache, freed after."""
    (pages,) = conn.execute("PRAGMA cache_size")[0]
    conn.execute(f"PRAGMA cache_size = {SCAN_CACHE}")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA cache_size = {int(pages)}")
        conn.execute("PRAGMA shrink_memory")


def _ids_of(
    conn: Conn, memories: list[str], high: int
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Ids up to ``high`` of the rows of ``memories``, and of their raw turns, ascending: an
    index probe finds those with such rows, the covering filter index their ids (no scan of
    the rows themselves)."""
    probe = f"SELECT 1 FROM entries WHERE memory_id = ? AND message_id <= {int(high)} LIMIT 1"
    held = [m for m in memories if conn.execute(probe, [m])]
    found: list[Row] = []
    for part in chunks(held, 500):
        found += conn.execute(
            f"SELECT message_id, message_type = 'raw' FROM {BY_ID} WHERE message_id <= ? "
            f"AND memory_id IN ({marks(len(part))}) ORDER BY message_id",
            [high, *part],
        )
    ids = np.asarray([r[0] for r in found], np.int64)
    raw = np.asarray([bool(r[1]) for r in found], np.bool_)
    order = np.argsort(ids, kind="stable")
    return ids[order], ids[order][raw[order]]


def _after(conn: Conn, columns: str, source: str, where: str, high: int, only: Only) -> list[Row]:
    """Rows of ``source`` (alias ``e``) above ``high`` and matching ``where``, a chunk in id
    order; only those of ``only`` where given (looked up by id)."""
    params: list[object] = [high]
    if only is not None:
        pick = only[np.searchsorted(only, high, side="right") :][:LOAD_CHUNK].tolist()
        if not pick:
            return []
        where += f" AND e.message_id IN ({marks(len(pick))})"
        params += pick
    return conn.execute(
        f"SELECT {columns} FROM {source} WHERE e.message_id > ?{where} "
        "ORDER BY e.message_id LIMIT ?",
        [*params, LOAD_CHUNK],
    )


def _texts_after(
    conn: Conn, high: int, only: Only = None
) -> list[tuple[int, str, str, str | None]]:
    columns = "message_id, memory_id, content, message_type, user_id, agent_id, session_id"
    rows = _after(conn, columns, "entries e", "", high, only)
    return [(int(r[0]), str(r[1]), str(r[2]), _conversation(r)) for r in rows]


def _vectors_after(conn: Conn, high: int) -> list[tuple[int, str, bytes]]:
    """(message_id, memory_id, embedding) rows as SQLite returns them: int, str, bytes."""
    rows: list[tuple[int, str, bytes]] = conn.execute(  # type: ignore[assignment]
        "SELECT message_id, memory_id, embedding FROM entries WHERE message_id > ? "
        "AND embedding IS NOT NULL ORDER BY message_id LIMIT ?",
        [high, VECTOR_CHUNK],
    )
    return rows


def _turns_after(conn: Conn, high: int, only: Only = None) -> list[Turn]:
    columns = "message_id, memory_id, user_id, agent_id, session_id, valid_at, length(content)"
    rows = _after(conn, columns, "entries e", " AND e.message_type = 'raw'", high, only)
    return [(int(r[0]), r[1], r[2], r[3], r[4], float(r[5]), int(r[6])) for r in rows]


def _columns_after(conn: Conn, high: int, only: Only = None) -> list[FilterRow]:
    return _filter_rows(_after(conn, COLUMNS, BY_ID, "", high, only))


def _filter_rows(rows: Sequence[Row]) -> list[FilterRow]:
    """Typed rows of :data:`~.columns.COLUMNS`."""
    out: list[FilterRow] = []
    for r in rows:
        message_id, memory_id, *names, status, valid, invalid, recorded, retired, forget = r
        kind, user, agent, session, trust = (str(x) for x in names)
        times = (float(valid), invalid, float(recorded), retired, forget)
        out.append((int(message_id), str(memory_id), kind, user, agent, session, trust,
                    int(status), *times))  # fmt: skip
    return out


def _conversation(row: Row) -> str | None:
    """The conversation key (user, agent, session) of a raw turn's row; None for others."""
    return "\x1f".join(str(x) for x in row[4:7]) if row[3] == "raw" else None

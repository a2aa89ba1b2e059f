"""The SQLite store's four in-process indexes, and how they are kept current with the file.

New rows lie above each index's message-id high-water mark (committed ids form a prefix);
rows changed or erased since, by this process or any other, are named by the change log
(``entry_changes``, written by triggers) above a sequence mark. :meth:`Indexes.catch_up`
reads both from one committed snapshot under one lock, so every index moves together and
never backwards, and an entry another process erased stops counting (in BM25 statistics,
vectors, conversations and filter checks) from this process's next search on.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from memstrata.store.sql import Conn, Row, chunks, marks
from memstrata.store.sqlite.catchup import LOAD_CHUNK
from memstrata.store.sqlite.columns import COLUMNS, FilterColumns
from memstrata.store.sqlite.columns import Row as FilterRow
from memstrata.store.sqlite.conversations import ConversationIndex, Turn
from memstrata.store.sqlite.keywords import KeywordIndex
from memstrata.store.sqlite.vectors import VectorCache

#: Rows looked up by id through the covering filter index (see migration 5).
BY_ID = "entries e INDEXED BY entries_filter"


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

    def catch_up(self, conn: Conn) -> None:
        """Rows above the high-water marks, then the rows the change log names since the
        last catch-up: erased ones leave every index, changed ones get their filter columns
        again. ``conn`` must read committed state only (never a write transaction's). One
        query finds out whether anything is new; most searches stop there, without the lock."""
        newest, changed = conn.execute(
            "SELECT (SELECT max(message_id) FROM entries), (SELECT max(seq) FROM entry_changes)"
        )[0]
        if (newest or 0) <= self._rows_seen and (changed or 0) <= self._changes_seen:
            return
        with self._lock:
            self._sync(conn)
            self._rows_seen = max(self._rows_seen, newest or 0)

    def _sync(self, conn: Conn) -> None:
        self.keywords.sync(lambda high: _texts_after(conn, high))
        self.vectors.sync(lambda high: _vectors_after(conn, high))
        self.conversations.sync(lambda high: _turns_after(conn, high))
        self.columns.sync(lambda high: _columns_after(conn, high))
        while changed := conn.execute(
            "SELECT seq, message_id FROM entry_changes WHERE seq > ? ORDER BY seq LIMIT ?",
            [self._changes_seen, LOAD_CHUNK],
        ):
            self._apply_changes(conn, sorted({int(r[1]) for r in changed}))
            self._changes_seen = int(changed[-1][0])

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
            self.vectors.drop(gone)
            self.keywords.drop(gone)
            self.conversations.drop(gone)


def _texts_after(conn: Conn, high: int) -> list[tuple[int, str, str, str | None]]:
    rows = conn.execute(
        "SELECT message_id, memory_id, content, message_type, user_id, agent_id, session_id "
        "FROM entries WHERE message_id > ? ORDER BY message_id LIMIT ?",
        [high, LOAD_CHUNK],
    )
    return [(int(r[0]), str(r[1]), str(r[2]), _conversation(r)) for r in rows]


def _vectors_after(conn: Conn, high: int) -> list[tuple[int, str, bytes]]:
    rows = conn.execute(
        "SELECT message_id, memory_id, embedding FROM entries WHERE message_id > ? "
        "AND embedding IS NOT NULL ORDER BY message_id LIMIT ?",
        [high, LOAD_CHUNK],
    )
    return [(int(r[0]), str(r[1]), bytes(r[2])) for r in rows]


def _turns_after(conn: Conn, high: int) -> list[Turn]:
    rows = conn.execute(
        "SELECT message_id, memory_id, user_id, agent_id, session_id, valid_at FROM entries "
        "WHERE message_id > ? AND message_type = 'raw' ORDER BY message_id LIMIT ?",
        [high, LOAD_CHUNK],
    )
    return [(int(r[0]), r[1], r[2], r[3], r[4], float(r[5])) for r in rows]


def _columns_after(conn: Conn, high: int) -> list[FilterRow]:
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM {BY_ID} WHERE e.message_id > ? ORDER BY e.message_id LIMIT ?",
        [high, LOAD_CHUNK],
    )
    return _filter_rows(rows)


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

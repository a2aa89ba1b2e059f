"""What a storage backend supplies: a few primitives, and hooks with portable defaults.

The primitives (abstract) are connections, row locking, the two search legs, vector
encoding and migrations; the hooks keep a backend's own indexes current or answer faster
from them. Readers and writers (:mod:`.reader`, :mod:`.writer`) run their SQL against a
:class:`Backend`; :class:`~.base.Store` opens them on top, so they depend on the backend's
primitives and not on the store that creates them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from recallery.models import Scope
from recallery.store import neighbours
from recallery.store.erasures import ErasureLedger
from recallery.store.filters import EntryFilter
from recallery.store.neighbours import Near
from recallery.store.queries import Passing
from recallery.store.rows import AUDIT_INSERT
from recallery.store.sql import Conn, marks
from recallery.store.steps import FirstStep, Handover, KeywordStep, SecondStep

#: Writes an insert of entries hands over to run once their new ids are known.
WithIds = Callable[[list[int]], None]
#: The columns :meth:`Backend.insert_entry_rows` is given values for, in order.
ENTRY_INSERT_COLUMNS = (
    "memory_id",
    "tenant_id",
    "message_type",
    "content",
    "embedding",
    "valid_at",
    "recorded_at",
    "user_id",
    "agent_id",
    "session_id",
    "source_id",
    "invalid_at",
    "supersedes",
    "status",
    "trust",
    "origin",
    "use_count",
    "size_bytes",
)


class Backend(ABC):
    """A storage backend's primitives and hooks. Backends subclass :class:`~.base.Store`."""

    #: Human name of the backend, used in reports.
    name = "abstract"
    #: Appended to the job claim's SELECT: row locking where the backend has it (PostgreSQL:
    #: `` FOR UPDATE SKIP LOCKED``). SQLite needs none: its write transaction is exclusive.
    claim_suffix = ""
    #: The entries table as a query names it when it looks rows up by message id. SQLite's
    #: planner prefers a (memory_id, ...) index range over the primary key even for a short
    #: id list (a scan of the whole memory), so it names an index that starts with the id.
    entries_by_id = "entries e"
    #: The same for rows looked up by the turn they were extracted from (``source_id``): the
    #: same planner scans the memory for a list of 50 turns (47 ms at 100k entries, not 0.4).
    entries_by_source = "entries e"
    #: Whether a query names a list of message ids as one array parameter (PostgreSQL's
    #: ``= ANY(?::bigint[])``: one statement text to parse and plan, whatever the list's
    #: length) rather than one placeholder per id, which is what SQLite has.
    id_array = False
    #: Whether :meth:`window_search` scores conversation windows (SQLite); a backend without
    #: returns none, and turns score on their own text only.
    keyword_windows = False
    #: Whether a search's keyword legs run in this process, in the caller (in-memory indexes:
    #: SQLite), so that a lone search embeds its query on another thread meanwhile; where
    #: they run on a second connection (:meth:`alongside`) the caller embeds it.
    legs_in_process = False
    #: Where erasures are recorded outside the database (:mod:`.erasures`); None: nowhere.
    erasures: ErasureLedger | None = None
    #: The newest migration this backend knows (readiness compares the store's with it).
    latest_schema = 0

    @abstractmethod
    def migrate(self) -> None:
        """Apply numbered migrations not yet recorded."""

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def _read_conn(self) -> AbstractContextManager[Conn]:
        """A connection for reads (a consistent snapshot for its duration)."""

    @abstractmethod
    def _write_conn(self) -> AbstractContextManager[Conn]:
        """A connection inside a write transaction: commit on exit, roll back on error."""

    @abstractmethod
    def lock_memory(self, conn: Conn, memory_id: str) -> None:
        """Serialise writers of one memory until the transaction ends."""

    @abstractmethod
    def keyword_search(
        self, conn: Conn, scope: Scope, text: str, f: EntryFilter, limit: int, passing: Passing
    ) -> list[tuple[int, float]]:
        """The best ``limit`` keyword matches of ``text`` in ``scope`` that pass ``f``, as
        (message_id, score), best first. ``passing`` is that filter as a check on ids, for a
        backend that ranks outside SQL (SQLite); one that filters in its query may ignore it."""

    @abstractmethod
    def vector_search(
        self,
        conn: Conn,
        scope: Scope,
        vector: NDArray[np.float32],
        f: EntryFilter,
        limit: int,
        passing: Passing,
    ) -> list[tuple[int, float]]:
        """The ``limit`` entries of ``scope`` nearest ``vector`` that pass ``f``, as
        (message_id, cosine similarity), best first; ``passing`` as for keyword search."""

    @abstractmethod
    def encode_vector(self, vector: NDArray[np.float32]) -> object: ...

    @abstractmethod
    def decode_vector(self, value: Any) -> NDArray[np.float32]: ...

    def window_search(
        self, conn: Conn, scope: Scope, text: str, f: EntryFilter, limit: int, passing: Passing
    ) -> list[tuple[int, float]]:
        """The best ``limit`` keyword matches of ``text`` among conversation windows: each
        raw turn together with the turns written before it in its conversation, as one
        document (other entries: themselves), with the windows' statistics; (message_id,
        score) of entries that pass ``f``, best first. Words of a turn that ``f`` hides, or
        of an erased one, lift no window. Default: none (no window index)."""
        return []

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
        """:meth:`keyword_search` (``limit``) and :meth:`window_search` (``windows``, none
        where 0) of one query; a backend that scores both from one read of its postings
        overrides it, and one that pays a round trip per read reads the candidates' cosines
        with the query's ``vector`` and their lengths in it (:class:`~.steps.KeywordStep`).
        Default: none read."""
        matches = self.keyword_search(conn, scope, text, f, limit, passing)
        held = self.window_search(conn, scope, text, f, windows, passing) if windows > 0 else []
        return KeywordStep(matches, held)

    def conversation_near(
        self, conn: Conn, scope: Scope, ids: Sequence[int], reach: int
    ) -> dict[int, Near]:
        """For each raw entry of ``scope`` among ``ids``: up to ``reach`` raw turns before and
        after it in its conversation, nearest first, visible or not (the caller checks).
        Default: :func:`.neighbours.conversation_near`, portable SQL over covering indexes."""
        return neighbours.conversation_near(conn, scope, ids, reach)

    def vectors_of(
        self, conn: Conn, ids: Sequence[int], memory_ids: Collection[str] | None = None
    ) -> dict[int, NDArray[np.float32]]:
        """Stored vectors by message id (see :meth:`.Reader.vectors`; ``memory_ids``: the
        memories the ids belong to, where the caller knows). Default: read the rows."""
        rows = conn.execute(
            f"SELECT message_id, embedding FROM entries WHERE message_id IN ({marks(len(ids))})",
            list(ids),
        )
        return {int(r[0]): self.decode_vector(r[1]) for r in rows if r[1] is not None}

    def cosines_of(
        self,
        conn: Conn,
        ids: Sequence[int],
        vector: NDArray[np.float32],
        memory_ids: Collection[str] | None = None,
    ) -> dict[int, float]:
        """The cosine similarity of ``vector`` with the stored vectors of those of ``ids``
        that have one (0 for a vector of another dimension). Default: from
        :meth:`vectors_of`, one dot product each (the vectors are unit length)."""
        found = self.vectors_of(conn, ids, memory_ids)
        return {
            i: float(stored @ vector) if stored.shape == vector.shape else 0.0
            for i, stored in found.items()
        }

    def insert_entry_rows(
        self, conn: Conn, rows: Sequence[Sequence[object]], with_ids: WithIds | None = None
    ) -> list[int]:
        """Insert entry rows (values in :data:`ENTRY_INSERT_COLUMNS` order); the new message
        ids in row order. ``with_ids``: more writes of the same transaction that need only
        the ids, run once they are known (a store may run them while the rows are still
        going in). Default: one ``INSERT ... RETURNING`` per row, then ``with_ids``."""
        sql = (
            f"INSERT INTO entries ({', '.join(ENTRY_INSERT_COLUMNS)}) "
            f"VALUES ({marks(len(ENTRY_INSERT_COLUMNS))}) RETURNING message_id"
        )
        ids = [int(conn.execute(sql, list(row))[0][0]) for row in rows]
        if with_ids is not None:
            with_ids(ids)
        return ids

    def insert_audit_rows(self, conn: Conn, rows: Sequence[Sequence[object]]) -> None:
        """Insert audit events (values in :data:`~.rows.AUDIT_WRITTEN` order) as one batch.
        Default: one prepared ``INSERT`` sent for every row."""
        conn.executemany(AUDIT_INSERT, rows)

    def entries_inserted(
        self, conn: Conn, ids: Sequence[int], vectors: NDArray[np.float32]
    ) -> None:
        """Hook after entries are inserted (index maintenance). Default: nothing."""

    def entries_deleting(self, conn: Conn, ids: Sequence[int]) -> None:
        """Hook before entries are physically deleted (index maintenance). Default: nothing."""

    def reserve_ids(self, conn: Conn, through: int) -> None:
        """New entries get message ids above ``through``: ids an erasure ledger names are
        never handed out again after a restore."""
        raise NotImplementedError

    def erasing(self, conn: Conn) -> None:
        """Hook: the open transaction erases (an erasure, a deleted memory; not eviction), so
        the backend scrubs once it commits. Default: nothing."""

    def alongside(self, conn: Conn) -> AbstractContextManager[Conn | None]:
        """A second connection on the snapshot of the read transaction ``conn``, for another
        thread, where the backend can share one and has one free; else None. Default: None
        (SQLite's legs run in process, in the caller: :attr:`legs_in_process`)."""
        return nullcontext(None)

    def held_filter(self, conn: Conn, scope: Scope, f: EntryFilter) -> Passing | None:
        """The search legs' filter check from state the backend holds in memory, or None to
        check in SQL (:meth:`~.reader.Reader.passing`). Default: None."""
        return None

    def held_lengths(self, conn: Conn, scope: Scope, ids: Iterable[int]) -> dict[int, int] | None:
        """The lengths of raw turns (:meth:`~.reader.Reader.lengths`) from state the backend
        holds in memory, or None to read them in SQL. Default: None."""
        return None

    def held_times(
        self, conn: Conn, scope: Scope, ids: Iterable[int]
    ) -> list[tuple[int, float, str, str]] | None:
        """(id, valid time as epoch seconds, memory, end user) of those of ``ids`` in
        ``scope`` with a valid time, in any state, from state the backend holds in memory, or
        None to read them in SQL. Default: None."""
        return None

    #: Whether the backend answers a search's gather in two steps (:meth:`first_step`,
    #: :meth:`second_step`): where each read is a round trip (PostgreSQL).
    gathers_in_steps = False

    def first_step(
        self,
        conn: Conn,
        scope: Scope,
        vector: NDArray[np.float32],
        f: EntryFilter,
        limit: int,
        cosine_ids: Sequence[int],
        length_ids: Sequence[int],
    ) -> FirstStep | None:
        """A search's first step in one read (:class:`~.steps.FirstStep`): the ``limit``
        entries nearest ``vector`` that pass ``f``, the cosines of ``cosine_ids`` and the
        lengths of the raw turns among ``length_ids``; None to read each apart. Default: None."""
        return None

    def second_step(
        self,
        conn: Conn,
        scope: Scope,
        f: EntryFilter,
        vector: NDArray[np.float32],
        candidates: Sequence[int],
        centres: Sequence[int],
        reach: int,
        hops: int,
    ) -> SecondStep | None:
        """A search's second step in one read (:class:`~.steps.SecondStep`): ``reach`` turns
        either side of the raw ``centres``, and of those, the ``candidates`` and the newer
        ends of their supersession links (followed ``hops`` times more; 0: none) what the
        ranking needs; None to read each apart. Default: None."""
        return None

    def entries_table(self, f: EntryFilter) -> str:
        """The entries table as a query for ``f`` names it (by id, by source or plain)."""
        if f.message_ids is not None:
            return self.entries_by_id
        return self.entries_by_source if f.source_ids is not None else "entries e"

    def narrowed(self, conn: Conn, f: EntryFilter) -> EntryFilter:
        """``f`` with what an index of the backend tells in advance (the ids that may hold
        its text substring); the same entries pass. Default: ``f`` (PostgreSQL's planner
        reads its indexes itself)."""
        return f

    def schema_version(self) -> int:
        """The newest migration applied to the store."""
        raise NotImplementedError

    def warm(self) -> None:
        """Build whatever in-process search state the backend keeps, so the first search does
        not pay for it. Default: nothing (PostgreSQL keeps its indexes in the server)."""

    def scrub(self) -> bool:
        """Make deleted content unrecoverable from the store's files where that is due; True
        when it is done now, False when it stays due (the backend completes it later). The
        store runs it itself after each transaction that erases (:meth:`erasing`); calling
        it again is cheap. Default: nothing to do."""
        return True

    def files(self) -> list[Path]:
        """Local files holding this store's data, for checks that scan them after an erasure.
        Empty when the data lives in a server this process cannot read (PostgreSQL)."""
        return []

"""The scale-out store: PostgreSQL with pgvector (HNSW) and full-text search with BM25.

Several API servers and workers share one database: capacity is exact because writers lock
the memory row (``SELECT ... FOR UPDATE``), jobs are claimed with ``FOR UPDATE SKIP LOCKED``,
and migrations run under an advisory lock so processes may start together. Reads run in a
``REPEATABLE READ, READ ONLY`` transaction (one snapshot per block), writes in ``READ
COMMITTED`` transactions that commit when the block ends.

Needs the ``postgres`` extra (psycopg 3, psycopg-pool, pgvector) and a database where the
``vector`` extension exists or may be created.
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import psycopg
from numpy.typing import NDArray
from pgvector import Vector
from pgvector.psycopg import register_vector
from psycopg import IsolationLevel
from psycopg_pool import ConnectionPool, PoolTimeout

from recallery.errors import StoreError
from recallery.models import Scope
from recallery.store.backend import WithIds
from recallery.store.base import Store
from recallery.store.erasures import ErasureLedger
from recallery.store.filters import EntryFilter
from recallery.store.neighbours import Near
from recallery.store.postgres import bulk, documents, gathered, near, search
from recallery.store.postgres.conn import PgConn
from recallery.store.postgres.migrations import MIGRATIONS, reslot_again
from recallery.store.postgres.vectors import DISTANCE, cosine_of
from recallery.store.queries import Passing
from recallery.store.sql import Conn, Row
from recallery.store.steps import Handover, KeywordStep
from recallery.store.supersession import read_again_later

#: ``pg_advisory_lock`` key that serialises migrations across processes ("memstrat").
MIGRATION_LOCK = 0x6D656D7374726174
DEFAULT_POOL_SIZE = 10
CONNECT_TIMEOUT_S = 30.0
#: How long a search waits for a second connection before running its legs one by one.
BESIDE_WAIT_S = 0.001
_SNAPSHOT_ID = re.compile(r"[0-9A-F]+-[0-9A-F]+-[0-9]+")
#: Tables that hold entry text or terms derived from it: vacuumed after an erasure.
SCRUBBED_TABLES = ("entries", "fts_terms", "fts_docs", "evidence")
_HNSW_INDEX = "entries_hnsw_"
#: How long a process trusts that a dimension has no HNSW index before it looks again: an
#: index added while it runs (as after a bulk load without one) is used without a restart.
INDEX_RECHECK_S = 30.0


class PostgresStore(gathered.TwoSteps, Store):
    name = "postgres"
    latest_schema = MIGRATIONS[-1][0]
    claim_suffix = " FOR UPDATE SKIP LOCKED"
    id_array = True
    keyword_windows = True

    def __init__(
        self, dsn: str, *, pool_size: int = DEFAULT_POOL_SIZE, erasures: ErasureLedger | None = None
    ) -> None:
        """``erasures``: the ledger erasures are entered in (``recallery restore-erasures``
        replays it after ``pg_restore``)."""
        self.dsn = dsn
        self.erasures = erasures
        self._local = threading.local()
        self._scrub_due = False
        self.migrate()
        self._pool: ConnectionPool[psycopg.Connection[Row]] = ConnectionPool(
            dsn,
            min_size=1,
            max_size=max(pool_size, 1),
            configure=_configure,
            timeout=CONNECT_TIMEOUT_S,
            name="recallery",
            open=False,
        )
        try:
            self._pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
        except PoolTimeout as exc:
            raise StoreError(f"postgres: no connection to {_redacted(dsn)}: {exc}") from exc
        with self._read_conn() as conn:
            self.indexed_dims = _indexed_dimensions(conn)
        self._dims_read = time.monotonic()

    # --- connections ----------------------------------------------------------------------

    @contextmanager
    def _read_conn(self) -> Iterator[Conn]:
        current: PgConn | None = getattr(self._local, "read", None)
        if current is not None:  # nested read in the same thread: same snapshot
            yield current
            return
        with self._transaction(IsolationLevel.REPEATABLE_READ, read_only=True) as conn:
            self._local.read = conn
            try:
                yield conn
            finally:
                self._local.read = None

    @contextmanager
    def _write_conn(self) -> Iterator[Conn]:
        current: PgConn | None = getattr(self._local, "write", None)
        if current is not None:  # nested write in the same thread joins the transaction
            yield current
            return
        self._local.erased = False
        with self._transaction(IsolationLevel.READ_COMMITTED, read_only=False) as conn:
            self._local.write = conn
            try:
                yield conn
            finally:
                self._local.write = None
        if self._local.erased:  # committed: the scrub is an erasure's last step
            with contextlib.suppress(StoreError):  # it stays due for the next scrub()
                self.scrub()

    @contextmanager
    def _transaction(self, isolation: IsolationLevel, *, read_only: bool) -> Iterator[PgConn]:
        try:
            with self._pool.connection() as raw:
                raw.isolation_level = isolation
                raw.read_only = read_only
                with raw.transaction():
                    yield PgConn(raw)
        except psycopg.Error as exc:  # connecting, committing, pool timeouts
            raise StoreError(f"postgres: {exc}") from exc

    @contextmanager
    def alongside(self, conn: Conn) -> Iterator[Conn | None]:
        """A pooled connection whose read transaction imports ``conn``'s snapshot
        (``pg_export_snapshot``), so a search's legs run at once and see the same rows. Only
        a connection free now: a search never waits for a second one (nor holds one while
        waiting, which could starve a full pool)."""
        if not isinstance(conn, PgConn) or not conn.raw.read_only:
            yield None
            return
        try:
            raw = self._pool.getconn(timeout=BESIDE_WAIT_S)
        except PoolTimeout:
            yield None
            return
        try:
            snapshot = str(conn.execute("SELECT pg_export_snapshot()")[0][0])
            if not _SNAPSHOT_ID.fullmatch(snapshot):
                raise StoreError(f"postgres: unexpected snapshot id {snapshot!r}")
            raw.isolation_level = IsolationLevel.REPEATABLE_READ
            raw.read_only = True
            with raw.transaction():
                raw.execute(f"SET TRANSACTION SNAPSHOT '{snapshot}'")
                yield PgConn(raw)
        except psycopg.Error as exc:
            raise StoreError(f"postgres: {exc}") from exc
        finally:
            self._pool.putconn(raw)

    def close(self) -> None:
        self._pool.close()

    # --- migrations -----------------------------------------------------------------------

    def migrate(self) -> None:
        """Apply migrations not yet recorded, one process at a time (advisory lock)."""
        try:
            with psycopg.connect(self.dsn, autocommit=True) as raw:
                raw.execute("SELECT pg_advisory_lock(%s)", [MIGRATION_LOCK])
                try:
                    _apply_migrations(raw)
                finally:
                    raw.execute("SELECT pg_advisory_unlock(%s)", [MIGRATION_LOCK])
        except psycopg.Error as exc:
            raise StoreError(f"postgres: migration failed: {exc}") from exc

    def schema_version(self) -> int:
        with self._read_conn() as conn:
            return int(conn.execute("SELECT max(version) FROM schema_migrations")[0][0] or 0)

    def _indexed(self, conn: Conn, dim: int) -> frozenset[int]:
        """The dimensions with an HNSW index, read again where ``dim`` had none
        :data:`INDEX_RECHECK_S` ago or more."""
        now = time.monotonic()
        if dim not in self.indexed_dims and now - self._dims_read >= INDEX_RECHECK_S:
            self.indexed_dims, self._dims_read = _indexed_dimensions(conn), now
        return self.indexed_dims

    # --- primitives -----------------------------------------------------------------------

    def lock_memory(self, conn: Conn, memory_id: str) -> None:
        """Row lock on the memory until commit: writers of one memory queue up, from any
        process, so capacity checks and eviction see every committed write."""
        conn.execute("SELECT 1 FROM memories WHERE id = ? FOR UPDATE", [memory_id])

    def encode_vector(self, vector: NDArray[np.float32]) -> object:
        return np.ascontiguousarray(vector, dtype=np.float32)

    def decode_vector(self, value: Any) -> NDArray[np.float32]:
        if isinstance(value, Vector):
            value = value.to_numpy()
        return np.array(value, dtype=np.float32)

    def insert_entry_rows(
        self, conn: Conn, rows: Sequence[Sequence[object]], with_ids: WithIds | None = None
    ) -> list[int]:
        """One binary ``COPY`` (:func:`~recallery.store.postgres.bulk.copy_entries`)."""
        if not isinstance(conn, PgConn):
            return super().insert_entry_rows(conn, rows, with_ids)
        return bulk.copy_entries(conn, rows, with_ids)

    def insert_audit_rows(self, conn: Conn, rows: Sequence[Sequence[object]]) -> None:
        """One ``COPY`` for a batch of :data:`~recallery.store.postgres.bulk.COPY_FROM`
        events or more (:func:`~recallery.store.postgres.bulk.copy_audit`), the portable
        prepared ``INSERT`` for fewer."""
        if not isinstance(conn, PgConn) or len(rows) < bulk.COPY_FROM:
            super().insert_audit_rows(conn, rows)
            return
        bulk.copy_audit(conn, rows)

    def conversation_near(
        self, conn: Conn, scope: Scope, ids: Sequence[int], reach: int
    ) -> dict[int, Near]:
        """One statement: each raw turn's nearest ``reach`` turns on either side, by a
        LATERAL range of the conversation index each (the portable UNION ALL of four ranges
        per turn took PostgreSQL longer to plan than to run)."""
        return near.conversation_near(conn, scope, ids, reach)

    def vectors_of(
        self, conn: Conn, ids: Sequence[int], memory_ids: Collection[str] | None = None
    ) -> dict[int, NDArray[np.float32]]:
        """Stored vectors by message id, read in binary (pgvector's text form is parsed in
        Python, about 0.1 ms a vector)."""
        if not isinstance(conn, PgConn):
            return super().vectors_of(conn, ids, memory_ids)
        rows = conn.execute_binary(
            "SELECT message_id, embedding FROM entries WHERE message_id = ANY(?::bigint[]) "
            "AND embedding IS NOT NULL",
            [list(ids)],
        )
        return {int(r[0]): self.decode_vector(r[1]) for r in rows}

    def cosines_of(
        self,
        conn: Conn,
        ids: Sequence[int],
        vector: NDArray[np.float32],
        memory_ids: Collection[str] | None = None,
    ) -> dict[int, float]:
        """Computed by the server, as the vector leg's are: a float per row crosses the wire,
        not a vector (150 candidates: 225 kB and their decoding)."""
        if not isinstance(conn, PgConn):
            return super().cosines_of(conn, ids, vector, memory_ids)
        rows = conn.execute(
            f"SELECT e.message_id, {DISTANCE} FROM entries e "
            "WHERE e.message_id = ANY(?::bigint[]) AND e.embedding IS NOT NULL",
            [int(vector.shape[0]), np.ascontiguousarray(vector, np.float32), list(ids)],
        )
        return {int(i): cosine_of(d) for i, d in rows}

    def keyword_search(
        self, conn: Conn, scope: Scope, text: str, f: EntryFilter, limit: int, passing: Passing
    ) -> list[tuple[int, float]]:
        """BM25 in one statement whose WHERE clause is ``f``, so ``passing`` is not needed."""
        return search.keyword_search(conn, scope, text, f, limit)

    def window_search(
        self, conn: Conn, scope: Scope, text: str, f: EntryFilter, limit: int, passing: Passing
    ) -> list[tuple[int, float]]:
        """The windows around the keyword leg's best matches (:mod:`.windows`)."""
        return search.keyword_and_windows(conn, scope, text, f, 0, limit).windows

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
        """Both from one keyword search: its best matches are the windows' seeds; with the
        query's ``vector``, the candidates' cosines and lengths in the window statement (the
        vector is ready by then: the keyword rounds take longer than embedding it)."""
        return search.keyword_and_windows(conn, scope, text, f, limit, windows, vector)

    def vector_search(
        self,
        conn: Conn,
        scope: Scope,
        vector: NDArray[np.float32],
        f: EntryFilter,
        limit: int,
        passing: Passing,
    ) -> list[tuple[int, float]]:
        """pgvector with ``f`` in the statement's WHERE clause, so ``passing`` is not needed."""
        indexed = self._indexed(conn, int(vector.shape[0]))
        return search.vector_search(conn, scope, vector, f, limit, indexed)

    def entries_deleting(self, conn: Conn, ids: Sequence[int]) -> None:
        self._scrub_due = True

    def erasing(self, conn: Conn) -> None:
        self._local.erased = self._scrub_due = True

    def reserve_ids(self, conn: Conn, through: int) -> None:
        """New entries get ids above ``through`` (ids an erasure ledger names)."""
        conn.execute(
            "SELECT setval('entries_message_id_seq', greatest(last_value, ?)) "
            "FROM entries_message_id_seq",
            [through],
        )

    def scrub(self) -> bool:
        """VACUUM the tables that held deleted text, where rows were deleted since the last
        time, so their dead rows are pruned and the space is reused; True once done. See
        docs/deployment.md for what this does and cannot guarantee."""
        if not self._scrub_due:
            return True
        self._scrub_due = False
        try:
            with self._pool.connection() as raw:
                raw.autocommit = True
                try:
                    for table in SCRUBBED_TABLES:
                        raw.execute(f"VACUUM {table}")
                finally:
                    raw.autocommit = False
        except psycopg.Error as exc:
            self._scrub_due = True
            raise StoreError(f"postgres: {exc}") from exc
        return True


def _indexed_dimensions(conn: Conn) -> frozenset[int]:
    """Dimensions with an ``entries_hnsw_<dim>`` index (the migrations' and any added)."""
    rows = conn.execute(
        "SELECT indexname FROM pg_indexes WHERE tablename = 'entries' "
        "AND schemaname = current_schema() AND indexname LIKE ?",
        [_HNSW_INDEX + "%"],
    )
    suffixes = (str(r[0])[len(_HNSW_INDEX) :] for r in rows)
    return frozenset(int(s) for s in suffixes if s.isdigit())


def _configure(raw: psycopg.Connection[Row]) -> None:
    """Each new pooled connection: pgvector's numpy adapter, the dumper of keyword
    documents (:mod:`~recallery.store.postgres.documents`) and iterative HNSW scans."""
    register_vector(raw)
    documents.register_documents(raw)
    raw.execute("SET hnsw.iterative_scan = relaxed_order")
    raw.commit()


def _apply_migrations(raw: psycopg.Connection[Row]) -> None:
    raw.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, "
        "name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
    )
    done = {int(r[0]) for r in raw.execute("SELECT version FROM schema_migrations")}
    later = read_again_later(MIGRATIONS, done, reslot_again)
    for version, name, script in MIGRATIONS:
        if version in done:
            continue
        with raw.transaction():
            if not callable(script):
                raw.execute(script)
            elif version not in later:
                script(raw)
            raw.execute(
                "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)", [version, name]
            )


def _redacted(dsn: str) -> str:
    """The DSN without its password, for error messages."""
    info = psycopg.conninfo.conninfo_to_dict(dsn)
    info.pop("password", None)
    return psycopg.conninfo.make_conninfo(**{k: str(v) for k, v in info.items() if v is not None})


__all__ = ["PostgresStore"]

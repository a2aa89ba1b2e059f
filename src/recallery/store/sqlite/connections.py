"""Connections to the SQLite store's file, each set up the same way, and their adapter to
the store's :class:`~recallery.store.sql.Conn` protocol (sqlite errors become
:class:`~recallery.errors.StoreError`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

from recallery.errors import StoreError
from recallery.store.sql import Row

#: How long a connection waits for another one's lock (a writer's, in practice).
BUSY_TIMEOUT_MS = 30_000


class RawConn:
    """Adapts :class:`sqlite3.Connection` to the store's :class:`Conn` protocol."""

    def __init__(self, raw: sqlite3.Connection) -> None:
        self.raw = raw
        #: Whether the in-process indexes caught up during this transaction.
        self.caught_up = False

    def execute(self, sql: str, params: Sequence[object] = ()) -> list[Row]:
        try:
            return self.raw.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"sqlite: {exc}") from exc

    def executemany(self, sql: str, rows: Iterable[Sequence[object]]) -> None:
        try:
            self.raw.executemany(sql, rows)
        except sqlite3.Error as exc:
            raise StoreError(f"sqlite: {exc}") from exc


def connect(path: Path, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are begun explicitly), WAL, with
    ``secure_delete`` on, shareable across threads (the store serialises its use), whose
    ``lower()`` folds every letter as PostgreSQL's does."""
    raw = sqlite3.connect(
        path, isolation_level=None, check_same_thread=False, timeout=busy_timeout_ms / 1000
    )
    for pragma in (
        "journal_mode = WAL",
        "synchronous = NORMAL",
        "secure_delete = ON",
        f"busy_timeout = {busy_timeout_ms}",
        "temp_store = MEMORY",
        "cache_size = -65536",
    ):
        raw.execute(f"PRAGMA {pragma}")
    # SQLite's own lower() folds ASCII only, so `lower(content) LIKE '%казани%'` never found
    # "Казани"; the filters' SQL is shared with PostgreSQL, whose lower() folds every letter
    raw.create_function("lower", 1, _lower, deterministic=True)
    return raw


def _lower(value: str | bytes | float | None) -> str | bytes | float | None:
    """SQL ``lower(x)``: text in lower case, every script; other values as they are."""
    return value.lower() if isinstance(value, str) else value


def statements(script: str) -> list[str]:
    """Split a migration script into statements, keeping trigger bodies whole."""
    complete: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                complete.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        complete.append(buffer.strip())
    return complete


__all__ = ["BUSY_TIMEOUT_MS", "RawConn", "connect", "statements"]

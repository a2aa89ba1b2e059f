"""The SQLite store against the conformance suite, plus what only SQLite has to show."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from recallery.store.sqlite import SQLiteStore
from recallery.testing.conformance import StoreConformance


class TestSQLiteConformance(StoreConformance):
    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[SQLiteStore]:
        s = SQLiteStore(tmp_path / "conformance.db")
        yield s
        s.close()


def test_pragmas_and_schema_version(tmp_path: Path) -> None:
    s = SQLiteStore(tmp_path / "db.sqlite")
    try:
        raw = s._writer
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert raw.execute("PRAGMA secure_delete").fetchone()[0] == 1
        assert s.schema_version() >= 1
    finally:
        s.close()


def test_reopening_applies_no_migration_twice(tmp_path: Path) -> None:
    SQLiteStore(tmp_path / "db.sqlite").close()
    s = SQLiteStore(tmp_path / "db.sqlite")
    try:
        rows = s._writer.execute("SELECT count(*) FROM schema_migrations").fetchone()
        assert rows[0] == s.schema_version()
    finally:
        s.close()

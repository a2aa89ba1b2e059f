"""The SQLite store against the conformance suite, plus what only SQLite has to show."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from recallery.models import EntryType, Scope
from recallery.store.filters import EntryFilter
from recallery.store.sqlite import SQLiteStore
from recallery.testing.conformance import T0, StoreConformance, make_memory, new_entry, unit


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


def test_the_text_index_names_the_few_entries_that_may_hold_a_substring(tmp_path: Path) -> None:
    s = SQLiteStore(tmp_path / "db.sqlite")
    memory = make_memory()
    fact = {"message_type": EntryType.SEMANTIC}
    texts = [("the code is QXJV", fact), ("a plain fact", fact), ("the code is QXJV", {})]
    try:
        with s.write() as w:
            w.insert_memory(memory)
            entries = [new_entry(memory, t, **kw) for t, kw in texts]
            coded, _plain, _raw = w.insert_entries(entries, np.stack([unit(1)] * 3), T0)
        facts = EntryFilter(types=frozenset(EntryType.extracted()), content_contains="Code is q")
        with s.read() as r:
            assert s.narrowed(r.conn, facts).message_ids == {coded}  # raw turns are not in it
            for unanswered in (replace(facts, types=None), replace(facts, content_contains="qx")):
                assert s.narrowed(r.conn, unanswered) == unanswered  # left to the scan
        with s.write() as w:
            w.delete_entries(memory.id, [coded])

        def pieces_kept() -> bool:
            blocks = s._writer.execute("SELECT block FROM entries_text_data").fetchall()
            return any(b"qxj" in bytes(b) for (b,) in blocks)

        assert pieces_kept()  # a deletion is a marker until the segments merge
        s.scrub()
        assert not pieces_kept()
        with s.read() as r:
            assert s.narrowed(r.conn, facts).message_ids == frozenset()
            assert [e.message_id for e in r.entries(Scope.of(memory.id), facts)[0]] == []
    finally:
        s.close()

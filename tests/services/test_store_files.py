"""Backup and restore ask the store port for their file work (issue 56 step 5): the procedure
names no backend, the backend that has no files here is refused naming the setting, and a
backup made by a backend without files is refused naming its source."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.files import engine_in

from recallery.errors import InvalidInput
from recallery.services import backup as backups
from recallery.settings import Settings
from recallery.store import files_named, store_files
from recallery.store.files import StoreFiles
from recallery.testing import FrozenClock

PG = "postgresql://nobody@localhost/none"


def test_backup_and_restore_of_a_postgresql_store_are_refused_naming_pg_dump(
    tmp_path: Path,
) -> None:
    settings = Settings(data_dir=tmp_path, database_url=PG)
    for call in (
        lambda: backups.backup(settings, tmp_path / "b", FrozenClock().now()),
        lambda: backups.restore(settings, tmp_path / "b", FrozenClock().now()),
    ):
        with pytest.raises(InvalidInput) as raised:
            call()
        assert raised.value.field == "database_url"
        assert "pg_dump" in str(raised.value)
    assert not (tmp_path / "b").exists()


def test_the_sqlite_store_has_file_work_and_a_manifest_names_it(tmp_path: Path) -> None:
    live = tmp_path / "live"
    with engine_in(live, FrozenClock()):
        pass
    files = store_files(Settings(data_dir=live))
    assert isinstance(files, StoreFiles)
    manifest = backups.backup(Settings(data_dir=live), tmp_path / "b", FrozenClock().now())
    assert manifest.backend == files.backend == "sqlite"
    assert manifest.schema_version == files.latest_schema
    assert manifest.sha256 == files.digest(tmp_path / "b" / "recallery.db")
    assert files_named("postgres") is None


def test_a_backup_of_a_backend_without_files_is_refused_naming_source(tmp_path: Path) -> None:
    live = tmp_path / "live"
    with engine_in(live, FrozenClock()):
        pass
    backups.backup(Settings(data_dir=live), tmp_path / "b", FrozenClock().now())
    path = tmp_path / "b" / "manifest.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "backend": "postgres"}))
    with pytest.raises(InvalidInput) as raised:
        backups.restore(Settings(data_dir=tmp_path / "fresh"), tmp_path / "b", FrozenClock().now())
    assert raised.value.field == "source"
    assert not (tmp_path / "fresh" / "recallery.db").exists()

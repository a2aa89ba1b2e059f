"""The SQLite store's files for backup and restore (:class:`~recallery.store.files.StoreFiles`):
an online copy with its facts, and a backup staged, sealed and swapped in through
:mod:`.copies`, under :mod:`.lockfile`'s exclusive lock (no process has the store open)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from recallery.errors import Conflict
from recallery.settings import Settings
from recallery.store.base import Store
from recallery.store.files import CopyFacts, Staged, StoreFiles
from recallery.store.sqlite import SQLiteStore, copies
from recallery.store.sqlite.lockfile import StoreLock


class SQLiteStaged(Staged):
    def __init__(self, staging: Path, target: Path, settings: Settings) -> None:
        self.staging, self.target, self.settings = staging, target, settings

    def open(self) -> Store:
        return SQLiteStore(
            self.staging, lock=False, ann_threshold=self.settings.ann_threshold, snapshot_rows=0
        )

    def seal(self) -> str:
        return copies.seal(self.staging)

    def count_present(self, erased: Sequence[tuple[str, Sequence[int]]]) -> int:
        return copies.count_present(self.staging, erased)

    def swap_in(self) -> None:
        copies.swap_in(self.staging, self.target)


class SQLiteFiles(StoreFiles):
    backend = SQLiteStore.name
    latest_schema = SQLiteStore.latest_schema

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def take_copy(self, dest: Path) -> CopyFacts:
        copies.online_copy(self.settings.sqlite_path, dest)
        check = copies.integrity(dest)
        if check != "ok":
            raise Conflict(f"the copy failed its integrity check: {check}")
        schema, counts = copies.facts(dest)
        return CopyFacts(schema, counts, dest.stat().st_size, copies.sha256(dest))

    def digest(self, path: Path) -> str:
        return copies.sha256(path)

    def private_file(self, path: Path) -> None:
        copies.owner_only(path)

    @contextmanager
    def restoring(self, copy: Path, digest: str, *, replace: bool) -> Iterator[Staged]:
        target = self.settings.sqlite_path
        lock = StoreLock(target, exclusive=True)  # Conflict while a process has it open
        staging = copies.staging_for(target)
        try:
            if target.exists() and not replace:
                raise Conflict(f"a store exists at {target}; pass --replace to overwrite it")
            copies.stage(copy, staging, digest)
            yield SQLiteStaged(staging, target, self.settings)
        finally:
            copies.discard(staging)
            lock.release()


__all__ = ["SQLiteFiles", "SQLiteStaged"]

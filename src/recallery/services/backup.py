"""Backup and restore of the embedded SQLite store, with a manifest, and erasures kept.

:func:`backup` writes a directory: ``recallery.db`` (an online copy taken while the store
keeps serving, :mod:`recallery.store.sqlite.copies`) and ``manifest.json`` (when, the
recallery version, the schema version, row counts, the copy's size and sha256).

:func:`restore` checks the manifest against the copy, refuses while any process has the
target store open (:mod:`recallery.store.sqlite.lockfile`), puts the copy in place, migrates
it and then erases again everything the erasure ledger records (:mod:`recallery.store.erasures`):
a backup taken before an erasure still holds the erased text, and restoring it must not
bring that text back. These functions work on closed files, so the command line calls them
directly rather than through an open engine.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from importlib.metadata import version as installed_version
from pathlib import Path

from recallery.errors import Conflict, InvalidInput
from recallery.models import AuditAction, Scope
from recallery.policies.eviction import delete_with_tombstones
from recallery.settings import Settings
from recallery.store.erasures import Erasure, ErasureLedger
from recallery.store.sqlite import SIDE_FILES, SQLiteStore
from recallery.store.sqlite.copies import facts, integrity, online_copy, reserve_ids, sha256
from recallery.store.sqlite.lockfile import StoreLock
from recallery.store.sqlite.migrations import MIGRATIONS

MANIFEST = "manifest.json"
COPY = "recallery.db"
FORMAT = 1
#: The actor and reason of the tombstones a restore leaves for what it erases again.
RESTORE_ACTOR = "restore"
RESTORE_REASON = "erased after this backup was taken (erasure ledger)"


@dataclass(frozen=True)
class Manifest:
    """What a backup holds, written beside its copy as ``manifest.json``."""

    created_at: str
    recallery_version: str
    schema_version: int
    counts: Mapping[str, int]
    bytes: int
    sha256: str
    file: str = COPY
    backend: str = "sqlite"
    format: int = FORMAT


@dataclass(frozen=True)
class RestoreReport:
    manifest: Manifest
    #: Entries of the copy erased again from the ledger, and memories deleted again.
    entries_erased: int
    memories_deleted: int
    integrity: str
    ledgers: tuple[str, ...] = field(default=())


def backup(settings: Settings, dest: Path, now: datetime) -> Manifest:
    """Copy the live store of ``settings`` into the new directory ``dest``."""
    _sqlite_only(settings)
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()):
        raise Conflict(f"dest: {dest} exists and is not empty; back up into a new directory")
    dest.mkdir(parents=True, exist_ok=True)
    copy = dest / COPY
    online_copy(settings.sqlite_path, copy)
    check = integrity(copy)
    if check != "ok":
        raise Conflict(f"the copy failed its integrity check: {check}")
    schema, counts = facts(copy)
    manifest = Manifest(
        created_at=now.isoformat(),
        recallery_version=installed_version("recallery"),
        schema_version=schema,
        counts=counts,
        bytes=copy.stat().st_size,
        sha256=sha256(copy),
    )
    (dest / MANIFEST).write_text(json.dumps(asdict(manifest), indent=2) + "\n", "utf-8")
    return manifest


def read_manifest(source: Path) -> Manifest:
    """The manifest of the backup in ``source``, checked against its copy."""
    path = Path(source) / MANIFEST
    try:
        raw = json.loads(path.read_text("utf-8"))
        manifest = Manifest(**raw)
    except (OSError, ValueError, TypeError) as exc:
        raise InvalidInput("source", f"source: no readable manifest at {path}: {exc}") from exc
    if manifest.format != FORMAT or manifest.backend != "sqlite":
        raise InvalidInput("source", f"source: format {manifest.format} of {manifest.backend}")
    newest = max(v for v, _, _ in MIGRATIONS)
    if manifest.schema_version > newest:
        raise InvalidInput(
            "source",
            f"source: schema version {manifest.schema_version} is newer than this recallery's "
            f"({newest}); restore it with the version that made it",
        )
    copy = Path(source) / manifest.file
    if not copy.is_file() or sha256(copy) != manifest.sha256:
        raise InvalidInput("source", f"source: {copy} does not match its manifest's sha256")
    return manifest


def restore(
    settings: Settings,
    source: Path,
    now: datetime,
    *,
    ledgers: Sequence[Path] = (),
    replace: bool = False,
) -> RestoreReport:
    """Put the backup in ``source`` in place as the store of ``settings``, then erase again
    what the target's erasure ledger and ``ledgers`` record; their records join the
    target's ledger, so a later restore there erases them too."""
    _sqlite_only(settings)
    manifest = read_manifest(source)
    target = settings.sqlite_path
    lock = StoreLock(target, exclusive=True)  # Conflict while a process has it open
    try:
        if target.exists() and not replace:
            raise Conflict(f"a store exists at {target}; pass --replace to overwrite it")
        staging = target.with_name(target.name + ".restoring")
        shutil.copyfile(Path(source) / manifest.file, staging)
        if sha256(staging) != manifest.sha256 or integrity(staging) != "ok":
            staging.unlink()
            raise InvalidInput("source", "source: the copy changed or is damaged")
        for side in SIDE_FILES:  # an old WAL must never be replayed onto the new file
            target.with_name(target.name + side).unlink(missing_ok=True)
        os.replace(staging, target)
        records = _merged_ledgers(settings.erasure_ledger_path, ledgers)
        erased, deleted = _erase_again(target, settings, records, now)
        reserve_ids(target, max((max(r.message_ids, default=0) for r in records), default=0))
        report = RestoreReport(
            manifest, erased, deleted, integrity(target), tuple(str(p) for p in ledgers)
        )
    finally:
        lock.release()
    return report


def _merged_ledgers(own: Path, others: Sequence[Path]) -> list[Erasure]:
    """The target's ledger with the records of ``others`` appended to it first."""
    mine = ErasureLedger(own)
    known = set(mine.read())
    for other in others:
        if Path(other).resolve() == own.resolve():
            continue
        if not Path(other).is_file():
            raise InvalidInput("erasures", f"erasures: no ledger at {other}")
        for record in ErasureLedger(Path(other)).read():
            if record not in known:
                mine.append(record)
                known.add(record)
    return list(mine.read())


def _erase_again(
    target: Path, settings: Settings, records: Sequence[Erasure], now: datetime
) -> tuple[int, int]:
    """Apply ``records`` to the restored store, in one transaction; (entries, memories)."""
    store = SQLiteStore(target, lock=False, ann_threshold=settings.ann_threshold, snapshot_rows=0)
    erased = deleted = 0
    try:
        with store.write() as w:
            for record in records:
                if record.whole_memory:
                    if w.memory(record.memory_id) is not None:
                        w.delete_memory(record.memory_id)
                        deleted += 1
                    continue
                present = w.get_entries(Scope.of(record.memory_id), record.message_ids)
                erased += len(
                    delete_with_tombstones(
                        w,
                        record.memory_id,
                        sorted(present),
                        now,
                        RESTORE_ACTOR,
                        RESTORE_REASON,
                        AuditAction.ENTRY_ERASE,
                    )
                )
        store.scrub()
    finally:
        store.close()
    return erased, deleted


def _sqlite_only(settings: Settings) -> None:
    if settings.database_url:
        raise InvalidInput(
            "database_url",
            "database_url: backup and restore here are for the embedded SQLite store; "
            "on PostgreSQL use pg_dump and pg_restore (docs/deployment.md)",
        )


__all__ = ["MANIFEST", "Manifest", "RestoreReport", "backup", "read_manifest", "restore"]

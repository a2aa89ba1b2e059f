"""Backup and restore of the embedded SQLite store, with a manifest, and erasures kept.

:func:`backup` writes a directory: ``recallery.db`` (an online copy taken while the store
keeps serving) and ``manifest.json`` (when, the recallery version, the schema version, row
counts, the copy's size and sha256).

:func:`restore` checks the manifest against the copy and reads and checks every erasure
ledger (:mod:`recallery.store.erasures`) before it touches anything, refuses while any
process has the target store open, and works on a staging copy beside the store: migrated,
erased again of everything the ledgers record (:mod:`.ledgers`: a backup taken before an
erasure still holds the erased text, and restoring it must not bring that text back),
scrubbed, sealed and checked, and only then put in place in one rename. A failure at any
step, a crash included, leaves the store as it was, and the erased text never reaches its
files. These functions work on closed files, so the command line calls them directly rather
than through an open engine. Everything they create is owner-only (0600 files, 0700
directories).

This module holds the procedure; the file work under it (the copy, the lock, staging,
sealing and the swap) is the backend's, behind the store port
(:class:`~recallery.store.files.StoreFiles`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from importlib.metadata import version as installed_version
from pathlib import Path

from recallery.errors import Conflict, InvalidInput
from recallery.services.ledgers import read_ledgers, replay
from recallery.settings import Settings
from recallery.store import files_named, store_files
from recallery.store.erasures import Erasure, ErasureLedger
from recallery.store.files import Staged, StoreFiles

MANIFEST = "manifest.json"
COPY = "recallery.db"
FORMAT = 1


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
    files = store_files(settings)
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()):
        raise Conflict(f"dest: {dest} exists and is not empty; back up into a new directory")
    dest.mkdir(mode=0o700, parents=True, exist_ok=True)
    taken = files.take_copy(dest / COPY)
    manifest = Manifest(
        created_at=now.isoformat(),
        recallery_version=installed_version("recallery"),
        schema_version=taken.schema_version,
        counts=taken.counts,
        bytes=taken.bytes,
        sha256=taken.sha256,
        backend=files.backend,
    )
    files.private_file(dest / MANIFEST)
    (dest / MANIFEST).write_text(json.dumps(asdict(manifest), indent=2) + "\n", "utf-8")
    return manifest


def read_manifest(source: Path, files: StoreFiles | None = None) -> Manifest:
    """The manifest of the backup in ``source``, checked against its copy (by ``files``,
    the target's file work; by default, the work of the backend the manifest names)."""
    path = Path(source) / MANIFEST
    try:
        raw = json.loads(path.read_text("utf-8"))
        manifest = Manifest(**raw)
    except (OSError, ValueError, TypeError) as exc:
        raise InvalidInput("source", f"source: no readable manifest at {path}: {exc}") from exc
    files = files_named(manifest.backend) if files is None else files
    if manifest.format != FORMAT or files is None or manifest.backend != files.backend:
        raise InvalidInput("source", f"source: format {manifest.format} of {manifest.backend}")
    newest = files.latest_schema
    if manifest.schema_version > newest:
        raise InvalidInput(
            "source",
            f"source: schema version {manifest.schema_version} is newer than this recallery's "
            f"({newest}); restore it with the version that made it",
        )
    copy = Path(source) / manifest.file
    if not copy.is_file() or files.digest(copy) != manifest.sha256:
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
    """Put the backup in ``source`` in place as the store of ``settings``, erased again of
    what the target's erasure ledger and ``ledgers`` record; their records join the
    target's ledger, so a later restore there erases them too.

    Nothing is touched until every ledger has been read and checked. The copy is staged
    beside the store, erased again, scrubbed, sealed and checked there; only then does it
    replace the store, in one rename. Any failure before that leaves the store as it was."""
    files = store_files(settings)
    manifest = read_manifest(source, files)
    own = ErasureLedger(settings.erasure_ledger_path)
    records, added = read_ledgers(own, ledgers)
    copy = Path(source) / manifest.file
    with files.restoring(copy, manifest.sha256, replace=replace) as staged:
        erased, deleted = _erase_again(staged, records, now)
        check = staged.seal()
        if check != "ok":
            raise Conflict(f"the restored copy failed its integrity check: {check}")
        _verify(staged, records)
        staged.swap_in()
        for record in added:  # after the swap: a failure before it leaves the ledger too
            own.append(record)
    return RestoreReport(manifest, erased, deleted, check, tuple(str(p) for p in ledgers))


def _erase_again(staged: Staged, records: Sequence[Erasure], now: datetime) -> tuple[int, int]:
    """Replay ``records`` on the staged copy (:func:`.ledgers.replay`) and scrub its files;
    (entries, memories)."""
    store = staged.open()
    try:
        done = replay(store, records, now)
        if not store.scrub():
            raise Conflict("the staged copy could not be scrubbed; nothing was replaced")
    finally:
        store.close()
    return done.entries_erased, done.memories_deleted


def _verify(staged: Staged, records: Sequence[Erasure]) -> None:
    """The staged copy holds no entry and no memory that ``records`` erased."""
    left = staged.count_present([(r.memory_id, r.message_ids) for r in records])
    if left:
        raise Conflict(f"the staged copy still holds {left} erased rows; nothing was replaced")


__all__ = ["MANIFEST", "Manifest", "RestoreReport", "backup", "read_manifest", "restore"]

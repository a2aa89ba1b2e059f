"""Copies of a SQLite store: taken from a live store with SQLite's online backup API (never
a file copy), and put back through a staging file that replaces the store in one rename.

A file copy of a database in WAL mode can catch the main file between checkpoints and miss
committed transactions still in the WAL, or tear a page being written. The backup API reads
the database as one read transaction on a connection of its own (a consistent snapshot of
every committed transaction up to its start), while writers in other connections and
processes go on: WAL readers never block writers. The copy is written in rollback-journal
mode, so it is one self-contained file. Every file made here is owner-only (0600).

Putting a copy back (:func:`stage`, :func:`seal`, :func:`swap_in`): the copy is written to
a staging file beside the store, where it is checked and changed (erased again) while the
store stays as it was; only a sealed staging file (its WAL folded in, one self-contained
file, ``integrity_check`` passed) replaces the store, by ``os.replace``. The store's own WAL
is folded into it first, so removing that WAL before the rename loses nothing: a crash at
any point leaves either the old store, whole, or the new one.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from recallery.errors import Conflict, InvalidInput
from recallery.store.sql import Conn

#: Tables whose row counts a backup's manifest records.
COUNTED = ("users", "api_keys", "memories", "entries", "tombstones", "audit", "jobs")
#: Files SQLite keeps beside a database while it is open or after a crash.
SIDE_FILES = ("-wal", "-shm", "-journal")
#: The staging file's suffix: ``recallery.db.restoring`` beside ``recallery.db``.
STAGING = ".restoring"
#: The suffix of the marker of a scrub that is due (:mod:`.scrubbing`).
MARKER = ".scrub"


def owner_only(path: Path) -> None:
    """Create the empty file ``path`` readable and writable by its owner only (0600), so
    that SQLite, which gives a database's WAL and shared-memory files the database file's
    mode, makes those owner-only too. An existing file is left as it is."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def online_copy(source: Path, dest: Path) -> None:
    """Copy the committed state of the database at ``source`` into a new file ``dest``."""
    if not source.exists():
        raise InvalidInput("data_dir", f"data_dir: no store at {source}")
    src = sqlite3.connect(source, timeout=30)
    try:
        owner_only(dest)
        dst = sqlite3.connect(dest)
        try:
            src.backup(dst)  # one step: one read transaction, one snapshot
            dst.execute("PRAGMA journal_mode = DELETE")
        finally:
            dst.close()
    finally:
        src.close()


def integrity(path: Path) -> str:
    """``PRAGMA integrity_check``'s answer for the file at ``path`` (``ok`` when sound)."""
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("PRAGMA integrity_check").fetchall()
    finally:
        conn.close()
    return "; ".join(str(r[0]) for r in rows)


def facts(path: Path) -> tuple[int, dict[str, int]]:
    """The schema version and the row count of each :data:`COUNTED` table of a copy."""
    conn = sqlite3.connect(path)
    try:
        version = int(conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0])
        counts = {t: int(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in COUNTED}
    finally:
        conn.close()
    return version, counts


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def reserve_ids(conn: Conn, through: int) -> None:
    """New entries of the store get ids above ``through``: ids the erasure ledger names
    (entries written and erased after a backup) are never handed out again."""
    conn.execute(
        "UPDATE sqlite_sequence SET seq = ? WHERE name = 'entries' AND seq < ?",
        [through, through],
    )
    conn.execute(
        "INSERT INTO sqlite_sequence (name, seq) SELECT 'entries', ? "
        "WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'entries')",
        [through],
    )


def count_present(path: Path, erased: Sequence[tuple[str, Sequence[int]]]) -> int:
    """How many of ``erased`` (a memory and its message ids; no ids: the whole memory) the
    database at ``path`` still holds: memories and entries."""
    conn = sqlite3.connect(path)
    try:
        left = 0
        for memory_id, ids in erased:
            if not ids:
                sql, params = "SELECT count(*) FROM memories WHERE id = ?", [memory_id]
                left += int(conn.execute(sql, params).fetchone()[0])
            for start in range(0, len(ids), 500):
                chunk = list(ids[start : start + 500])
                sql = (
                    "SELECT count(*) FROM entries WHERE memory_id = ? "
                    f"AND message_id IN ({','.join('?' * len(chunk))})"
                )
                left += int(conn.execute(sql, [memory_id, *chunk]).fetchone()[0])
    finally:
        conn.close()
    return left


def side_files(path: Path) -> list[Path]:
    return [path.with_name(path.name + side) for side in SIDE_FILES]


def staging_for(target: Path) -> Path:
    return target.with_name(target.name + STAGING)


def discard(path: Path) -> None:
    """Remove ``path``, its side files and its scrub marker, where they exist."""
    for file in (path, *side_files(path), path.with_name(path.name + MARKER)):
        file.unlink(missing_ok=True)


def stage(copy: Path, staging: Path, digest: str) -> None:
    """Copy the backup's file ``copy`` to ``staging`` (owner-only), and check that it is the
    file the manifest names (``digest``) and sound."""
    discard(staging)  # a staging file left by a restore that was killed
    owner_only(staging)
    with copy.open("rb") as src, staging.open("wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    if sha256(staging) != digest or integrity(staging) != "ok":
        raise InvalidInput("source", "source: the copy changed or is damaged")


def seal(staging: Path) -> str:
    """Fold the staging file's WAL into it and make it one self-contained file; returns
    ``integrity_check``'s answer, which must be ``ok`` for :func:`swap_in`."""
    conn = sqlite3.connect(staging, isolation_level=None)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode = DELETE")
    finally:
        conn.close()
    if any(side.exists() for side in side_files(staging)):
        return "the staging file still has a WAL or journal beside it"
    _sync(staging)
    return integrity(staging)


def swap_in(staging: Path, target: Path) -> None:
    """Replace ``target`` by the sealed ``staging`` file in one rename. The target's WAL is
    folded into it first (a ``Conflict`` while another connection, say an ``sqlite3``
    shell, reads it): an old WAL must never be replayed onto the new file, and removing an
    empty one loses nothing."""
    if target.exists():
        _fold_wal(target)
    for side in side_files(target):
        side.unlink(missing_ok=True)
    os.replace(staging, target)
    _sync(target.parent)


def _fold_wal(target: Path) -> None:
    try:
        conn = sqlite3.connect(target, isolation_level=None, timeout=0)
    except sqlite3.Error:
        return
    try:
        conn.execute("SELECT count(*) FROM sqlite_master")  # rolls a hot journal back
        busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            raise Conflict(f"the store {target} is open in another connection: {exc}") from exc
        return  # not a database: there is no WAL worth keeping
    except sqlite3.DatabaseError:
        return
    finally:
        conn.close()
    if busy:
        raise Conflict(f"the store {target} is open in another connection; close it first")


def _sync(path: Path) -> None:
    """Flush ``path`` (a file or a directory) to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


__all__ = [
    "COUNTED",
    "MARKER",
    "SIDE_FILES",
    "count_present",
    "discard",
    "facts",
    "integrity",
    "online_copy",
    "owner_only",
    "reserve_ids",
    "seal",
    "sha256",
    "stage",
    "staging_for",
    "swap_in",
]

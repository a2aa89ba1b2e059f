"""Copies of a live SQLite store: SQLite's online backup API, never a file copy.

A file copy of a database in WAL mode can catch the main file between checkpoints and miss
committed transactions still in the WAL, or tear a page being written. The backup API reads
the database as one read transaction on a connection of its own (a consistent snapshot of
every committed transaction up to its start), while writers in other connections and
processes go on: WAL readers never block writers. The copy is written in rollback-journal
mode, so it is one self-contained file.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

from recallery.errors import InvalidInput

#: Tables whose row counts a backup's manifest records.
COUNTED = ("users", "api_keys", "memories", "entries", "tombstones", "audit", "jobs")


def online_copy(source: Path, dest: Path) -> None:
    """Copy the committed state of the database at ``source`` into a new file ``dest``."""
    if not source.exists():
        raise InvalidInput("data_dir", f"data_dir: no store at {source}")
    src = sqlite3.connect(source, timeout=30)
    try:
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


def reserve_ids(path: Path, through: int) -> None:
    """New entries of the store at ``path`` get ids above ``through``: ids the erasure ledger
    names (entries written and erased after a backup) are never handed out again."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute(
            "UPDATE sqlite_sequence SET seq = ? WHERE name = 'entries' AND seq < ?",
            (through, through),
        )
        conn.execute(
            "INSERT INTO sqlite_sequence (name, seq) SELECT 'entries', ? "
            "WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'entries')",
            (through,),
        )
    finally:
        conn.close()


__all__ = ["COUNTED", "facts", "integrity", "online_copy", "reserve_ids", "sha256"]

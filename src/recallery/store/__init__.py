"""Storage backends behind one base class; :func:`open_store` is the one place that picks one
(and :func:`store_files` the one that picks a backend's file work, for backup and restore)."""

from __future__ import annotations

from urllib.parse import urlsplit

from recallery.errors import InvalidInput
from recallery.settings import Settings
from recallery.store.base import Store
from recallery.store.erasures import ErasureLedger
from recallery.store.files import StoreFiles

POSTGRES_SCHEMES = frozenset({"postgres", "postgresql"})


def open_store(settings: Settings) -> Store:
    """The store ``settings`` names: a ``postgresql://`` ``database_url`` opens PostgreSQL;
    without a URL, the embedded SQLite file in ``data_dir``. Either enters every erasure in
    the erasure ledger ``settings`` names (:mod:`.erasures`)."""
    url = settings.database_url
    ledger = ErasureLedger(settings.erasure_ledger_path)
    if not url:
        from recallery.store.sqlite import SQLiteStore

        return SQLiteStore(
            settings.sqlite_path, ann_threshold=settings.ann_threshold, erasures=ledger
        )
    scheme = urlsplit(url).scheme.lower()
    if scheme not in POSTGRES_SCHEMES:
        raise InvalidInput(
            "database_url",
            f"database_url must be a postgresql:// URL, not {scheme or 'schemeless'!r}; "
            "leave it unset for SQLite in data_dir",
        )
    from recallery.extras import require

    require("psycopg", "psycopg_pool", "pgvector", extra="postgres", what="the PostgreSQL store")
    from recallery.store.postgres import PostgresStore

    return PostgresStore(url, pool_size=settings.database_pool_size, erasures=ledger)


def store_files(settings: Settings) -> StoreFiles:
    """The file work (backup, restore) of the store ``settings`` names: the embedded SQLite
    store's; a PostgreSQL store has none here (``pg_dump``, named in the error)."""
    if settings.database_url:
        raise InvalidInput(
            "database_url",
            "database_url: backup and restore here are for the embedded SQLite store; "
            "on PostgreSQL use pg_dump and pg_restore (docs/deployment.md)",
        )
    from recallery.store.sqlite.files import SQLiteFiles

    return SQLiteFiles(settings)


def files_named(backend: str) -> StoreFiles | None:
    """The file work of the backend a backup's manifest names, for checking the backup
    alone (its digest, its schema against the newest known); None for a backend without
    files here. A restore uses :func:`store_files` of its target instead."""
    if backend != "sqlite":
        return None
    return store_files(Settings())


__all__ = ["Store", "StoreFiles", "files_named", "open_store", "store_files"]

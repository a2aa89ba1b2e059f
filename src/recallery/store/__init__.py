"""Storage backends behind one base class; :func:`open_store` is the one place that picks one."""

from __future__ import annotations

from urllib.parse import urlsplit

from recallery.errors import InvalidInput
from recallery.settings import Settings
from recallery.store.base import Store
from recallery.store.erasures import ErasureLedger

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


__all__ = ["Store", "open_store"]

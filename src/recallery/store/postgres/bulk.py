"""Bulk writes on PostgreSQL: entries and audit events in one ``COPY`` each.

Every entry row brings its keyword document and length, made by the analyzer both stores
share (:mod:`.documents`); the statement trigger counts their terms for ``fts_terms`` and
``fts_docs`` once for the whole batch.
"""

from __future__ import annotations

from collections.abc import Sequence

from recallery.store.backend import ENTRY_INSERT_COLUMNS, WithIds
from recallery.store.postgres.conn import PgConn
from recallery.store.postgres.documents import documents
from recallery.store.rows import AUDIT_WRITTEN

#: Audit events from which a batch is copied rather than inserted.
COPY_FROM = 50
#: Where an entry row's text is (its values follow ``ENTRY_INSERT_COLUMNS``).
_CONTENT = ENTRY_INSERT_COLUMNS.index("content")
#: Column types of a binary COPY into entries.
_ENTRY_TYPES = {
    "message_id": "int8",
    "embedding": "vector",
    "valid_at": "float8",
    "recorded_at": "float8",
    "source_id": "int8",
    "invalid_at": "float8",
    "supersedes": "int8",
    "status": "int4",
    "use_count": "int4",
    "size_bytes": "int4",
    "fts": "tsvector",
    "fts_len": "int4",
} | {c: "text" for c in ("memory_id", "tenant_id", "message_type", "content", "user_id",
                        "agent_id", "session_id", "trust", "origin")}  # fmt: skip


def copy_entries(
    conn: PgConn, rows: Sequence[Sequence[object]], with_ids: WithIds | None = None
) -> list[int]:
    """Ids from the sequence first, then one binary ``COPY`` with each row's keyword document
    and length (:func:`~.documents.documents`): the term statistics trigger runs once for the
    batch, and a 10,000-row import is one statement, not 10,000. ``with_ids`` runs as soon as
    the ids are drawn."""
    made = documents([str(r[_CONTENT]) for r in rows])
    drawn = conn.execute(
        "SELECT nextval('entries_message_id_seq') FROM generate_series(1, ?)", [len(rows)]
    )
    ids = sorted(int(r[0]) for r in drawn)
    if with_ids is not None:
        with_ids(ids)
    columns: tuple[str, ...] = ("message_id", *ENTRY_INSERT_COLUMNS, "fts", "fts_len")
    brought = ([i, *r, *d] for i, r, d in zip(ids, rows, made, strict=True))
    conn.copy_rows("entries", columns, brought, [_ENTRY_TYPES[c] for c in columns])
    return ids


def copy_audit(conn: PgConn, rows: Sequence[Sequence[object]]) -> None:
    """Audit events (:data:`~recallery.store.rows.AUDIT_WRITTEN` order) in one text ``COPY``,
    each with its memory's tenant (``''`` for none), as the row trigger would fill it."""
    memory = AUDIT_WRITTEN.index("memory_id")
    named = sorted({str(r[memory]) for r in rows if r[memory] is not None})
    found = conn.execute("SELECT id, tenant_id FROM memories WHERE id = ANY(?)", [named])
    tenants: dict[object, str] = {str(m): str(t) for m, t in found}
    conn.copy_rows(
        "audit", ("tenant_id", *AUDIT_WRITTEN), ([tenants.get(r[memory], ""), *r] for r in rows)
    )


__all__ = ["COPY_FROM", "copy_audit", "copy_entries"]

"""Conformance: migrations are numbered and recorded, and running them again (every process
start does) changes nothing: no migration re-applied, no table reshaped, no row touched."""

from __future__ import annotations

from recallery.models import AuditAction, JobKind, Memory, Scope, Tombstone, User
from recallery.store.base import Store
from recallery.store.filters import EntryFilter
from recallery.store.queries import AuditQuery
from recallery.testing.conformance.support import T0, Conformance, make_memory, unit

#: The tables every backend has; ``SELECT *`` on each gives its width (its number of columns).
TABLES = (
    "memories",
    "entries",
    "evidence",
    "tombstones",
    "jobs",
    "audit",
    "users",
    "memberships",
    "api_keys",
)


class SchemaConformance(Conformance):
    def test_migrate_is_idempotent(self, store: Store) -> None:
        memory = make_memory()
        ids = self._seed_every_table(store, memory)
        recorded, widths, data = _recorded(store), _widths(store), self._data(store, memory, ids)
        versions = [row[0] for row in recorded]
        assert versions == list(range(1, len(versions) + 1)) and versions  # numbered from 1
        assert None not in widths.values()  # every table seeded, so every width is known

        store.migrate()
        store.migrate()

        assert _recorded(store) == recorded  # none re-applied, none recorded again
        assert _widths(store) == widths  # no column added or dropped
        assert self._data(store, memory, ids) == data  # no row, statistic or index changed
        (later,) = self.seed(store, memory, [("after the migration", unit(1), {})])
        kw, vec = self.search_ids(store, memory, EntryFilter(), "migration", unit(1))
        assert kw == {ids[0], later} and vec == {*ids, later}

    def _seed_every_table(self, store: Store, memory: Memory) -> list[int]:
        turns = [
            ("before the migration", unit(1), {"session_id": "s"}),
            ("the next turn", unit(1, 1), {"session_id": "s"}),
            ("a turn to erase", unit(0, 1), {"session_id": "s"}),
        ]
        first, second, erased = self.seed(store, memory, turns)
        with store.write() as w:
            gone = w.get_entries(Scope.of(memory.id), [erased])[erased]
            w.delete_entries(memory.id, [erased])
            w.add_tombstones(
                [
                    Tombstone(
                        gone.message_id,
                        gone.memory_id,
                        gone.tenant_id,
                        gone.message_type,
                        gone.valid_at,
                        gone.recorded_at,
                        T0,
                        "x",
                        "erased",
                    )
                ]
            )
            w.add_evidence(first, second, T0)
            w.audit(at=T0, actor="x", action=AuditAction.ENTRY_ADD, memory_id=memory.id)
            w.enqueue_job(
                kind=JobKind.EXTRACTION,
                tenant_id=memory.tenant_id,
                memory_id=memory.id,
                message_id=first,
                at=T0,
            )
            w.insert_user(User("x", "X", False, T0))
            w.add_member(memory.tenant_id, "x")
            w.insert_api_key(key_id="k", user_id="x", key_hash="h", name="", scope=None, at=T0)
        return [first, second]

    def _data(self, store: Store, memory: Memory, ids: list[int]) -> tuple[object, ...]:
        """Everything the seeded rows read back as, searches and their scores included."""
        scope = Scope.of(memory.id)
        with store.read() as r:
            return (
                r.memory(memory.id),
                r.get_entries(scope, ids),
                {i: v.tolist() for i, v in r.vectors(ids).items()},
                r.neighbours(scope, ids, EntryFilter(), 1),
                r.keyword_candidates(scope, "migration turn", EntryFilter(), 10),
                r.vector_candidates(scope, unit(1), EntryFilter(), 10),
                r.evidence(ids[0]),
                r.tombstones(memory.id),
                r.audit_events(AuditQuery(memory_ids=frozenset({memory.id}))),
                r.jobs(frozenset({memory.id})),
                r.users(),
                r.members_of(memory.tenant_id),
                r.api_keys("x"),
            )


def _recorded(store: Store) -> list[tuple[object, ...]]:
    """The recorded migrations: (version, name, when applied)."""
    with store.read() as r:
        rows = r.conn.execute(
            "SELECT version, name, applied_at FROM schema_migrations ORDER BY version"
        )
    return [tuple(row) for row in rows]


def _widths(store: Store) -> dict[str, int | None]:
    """The number of columns of each table (None while it has no row to show them)."""
    with store.read() as r:
        rows = {table: r.conn.execute(f"SELECT * FROM {table} LIMIT 1") for table in TABLES}
    return {table: len(found[0]) if found else None for table, found in rows.items()}

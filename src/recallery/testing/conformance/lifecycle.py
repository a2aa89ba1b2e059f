"""Conformance: what deletion, rollback, eviction order, the audit log and evidence leave
behind (accounting and both search indexes included)."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from recallery.models import AuditAction, ForgettingPolicy, Scope
from recallery.store.base import Store
from recallery.store.filters import EntryFilter
from recallery.store.queries import AuditQuery
from recallery.testing.conformance.support import T0, Conformance, make_memory, new_entry, unit


class LifecycleConformance(Conformance):
    def test_delete_removes_from_both_indexes_and_accounting(self, store: Store) -> None:
        memory = make_memory()
        a, b = self.seed(
            store, memory, [("walrus tusk", unit(1), {}), ("walrus again", unit(1), {})]
        )
        with store.read() as r:
            m = r.memory(memory.id)
            assert m is not None and m.entry_count == 2
            size_b = r.get_entries(Scope.of(memory.id), [b])[b].size_bytes
        with store.write() as w:
            w.delete_entries(memory.id, [a])
        assert self.search_ids(store, memory, EntryFilter(), "walrus", unit(1)) == ({b}, {b})
        with store.read() as r:
            m = r.memory(memory.id)
            assert m is not None and (m.entry_count, m.used_bytes) == (1, size_b)
            assert r.vectors([a]) == {}

    def test_failed_transaction_leaves_nothing(self, store: Store) -> None:
        memory = make_memory()
        self.seed(store, memory, [("kept", unit(1), {})])
        with pytest.raises(RuntimeError), store.write() as w:
            w.insert_entries([new_entry(memory, "rolled back")], np.stack([unit(1)]), T0)
            w.audit(at=T0, actor="x", action=AuditAction.ENTRY_ADD, memory_id=memory.id)
            raise RuntimeError("boom")
        with store.read() as r:
            entries, total = r.entries(Scope.of(memory.id), EntryFilter())
            events, _ = r.audit_events(AuditQuery(memory_ids=frozenset({memory.id})))
            m = r.memory(memory.id)
        assert [e.content for e in entries] == ["kept"] and total == 1 and events == []
        assert m is not None and m.entry_count == 1
        assert self.search_ids(store, memory, EntryFilter(), "rolled", unit(1))[0] == set()

    def test_eviction_candidates_forgotten_first_then_policy_order(self, store: Store) -> None:
        memory = make_memory()
        a, b, c = self.seed(
            store, memory, [("a", unit(1), {}), ("b", unit(1), {}), ("c", unit(1), {})]
        )
        with store.write() as w:
            w.update_entries([c], {"forget_at": T0})
            w.record_use({a: 1}, {a: T0 + timedelta(days=2)})
            fifo = [
                x.message_id for x in w.eviction_candidates(memory.id, ForgettingPolicy.FIFO, 10)
            ]
            lru = [x.message_id for x in w.eviction_candidates(memory.id, ForgettingPolicy.LRU, 10)]
        assert fifo == [c, a, b]
        assert lru == [c, b, a]

    def test_audit_query_filters(self, store: Store) -> None:
        m1, m2 = make_memory(), make_memory()
        add, forget = AuditAction.ENTRY_ADD, AuditAction.ENTRY_FORGET
        with store.write() as w:
            w.audit(at=T0, actor="alice", action=add, memory_id=m1.id, message_id=1)
            w.audit(
                at=T0 + timedelta(hours=1),
                actor="bob",
                action=forget,
                memory_id=m1.id,
                message_id=1,
                before={"forget_at": None},
            )
            w.audit(at=T0, actor="alice", action=add, memory_id=m2.id, message_id=2)
        with store.read() as r:
            only_m1, total = r.audit_events(AuditQuery(memory_ids=frozenset({m1.id})))
            assert total == 2 and {e.memory_id for e in only_m1} == {m1.id}
            bob, _ = r.audit_events(AuditQuery(actor="bob"))
            assert [e.action for e in bob] == ["entry.forget"]
            assert bob[0].before == {"forget_at": None}
            late, _ = r.audit_events(AuditQuery(since=T0 + timedelta(minutes=30)))
            assert [e.actor for e in late] == ["bob"]
            assert r.audit_events(AuditQuery(memory_ids=frozenset())) == ([], 0)

    def test_a_batch_of_entry_events_is_each_entry_audited_once(self, store: Store) -> None:
        m1, m2 = make_memory(), make_memory()
        add = AuditAction.ENTRY_ADD
        with store.write() as w:
            w.audit(at=T0, actor="alice", action=add, memory_id=m1.id, message_id=1)
            w.audit_entries(at=T0, actor="bob", action=add, memory_id=m1.id, message_ids=[7, 3, 9])
            w.audit_entries(at=T0, actor="bob", action=add, memory_id=m2.id, message_ids=[])
        with store.read() as r:
            events, total = r.audit_events(AuditQuery(actor="bob"))
        assert total == 3 and sorted(e.message_id or 0 for e in events) == [3, 7, 9]
        assert {(e.action, e.memory_id, e.reason, e.at) for e in events} == {(add, m1.id, "", T0)}
        assert all(e.before == {} and e.after == {} for e in events)
        # In the batch's order: each id above the one written before it.
        assert [e.message_id for e in sorted(events, key=lambda e: e.id)] == [7, 3, 9]
        many = [(n * 37) % 500 + 1 for n in range(240)]  # a batch a backend may copy in
        with store.write() as w:
            w.audit_entries(at=T0, actor="carol", action=add, memory_id=m2.id, message_ids=many)
        with store.read() as r:
            events, total = r.audit_events(AuditQuery(actor="carol", limit=500))
            (other,), _ = r.audit_events(AuditQuery(actor="alice"))
        assert total == len(many) and {(e.action, e.memory_id) for e in events} == {(add, m2.id)}
        assert [e.message_id for e in sorted(events, key=lambda e: e.id)] == many
        assert other.message_id == 1

    def test_entries_inserted_with_their_events_are_each_audited_once(self, store: Store) -> None:
        """An insert that brings its audit events: one per entry, its own memory and id, in
        the insert's transaction; more rows than a store tokenises in one chunk as well."""
        m1, m2 = make_memory(), make_memory(tenant="tenant-b")
        add = AuditAction.ENTRY_ADD
        entries = [new_entry(m1 if n % 3 else m2, f"turn {n} about hiking") for n in range(1201)]
        with store.write() as w:
            w.insert_memory(m1)
            w.insert_memory(m2)
            ids = w.insert_entries(
                entries, np.stack([unit(1)] * len(entries)), T0, audit=("dan", add)
            )
        with store.read() as r:
            events, total = r.audit_events(AuditQuery(actor="dan", limit=2000))
        assert total == len(entries) and {e.action for e in events} == {add}
        assert sorted((e.message_id or 0, e.memory_id) for e in events) == sorted(
            (i, e.memory_id) for i, e in zip(ids, entries, strict=True)
        )
        with pytest.raises(RuntimeError), store.write() as w:  # rolled back: no event stays
            w.insert_entries(entries[:2], np.stack([unit(1)] * 2), T0, audit=("erin", add))
            raise RuntimeError("abandon the write")
        with store.read() as r:
            assert r.audit_events(AuditQuery(actor="erin")) == ([], 0)
            assert r.entries(Scope.of(m1.id), EntryFilter(), limit=1)[1] == 800

    def test_evidence_and_tombstones(self, store: Store) -> None:
        memory = make_memory()
        (a,) = self.seed(store, memory, [("fact", unit(1), {})])
        with store.write() as w:
            assert w.add_evidence(a, 41, T0) is True
            assert w.add_evidence(a, 41, T0) is False
        with store.read() as r:
            assert r.evidence(a) == [41]

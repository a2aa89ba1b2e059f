"""Conformance: memories round-trip, list only what their caller may see, and take their
entries with them when deleted."""

from __future__ import annotations

from recallery.models import Permission, Scope
from recallery.store.base import Store
from recallery.store.filters import EntryFilter
from recallery.store.queries import MemoryQuery
from recallery.testing.conformance.support import Conformance, make_memory, unit


class MemoryConformance(Conformance):
    def test_memory_round_trip_and_listing_visibility(self, store: Store) -> None:
        mine = make_memory("alice", name="Alpha notes")
        team = make_memory("bob", name="Team beta", permissions=Permission.TEAM)
        private = make_memory("bob", name="Bob private")
        with store.write() as w:
            for m in (mine, team, private):
                w.insert_memory(m)
        with store.read() as r:
            assert r.memory(mine.id) == mine
            found, total = r.find_memories(MemoryQuery("alice", frozenset({"alice", "bob"})))
            assert {m.id for m in found} == {mine.id, team.id} and total == 2
            found, _ = r.find_memories(
                MemoryQuery("alice", frozenset({"alice", "bob"}), keywords="BETA")
            )
            assert [m.id for m in found] == [team.id]
            found, _ = r.find_memories(MemoryQuery("alice", frozenset({"alice"})))
            assert [m.id for m in found] == [mine.id]

    def test_update_and_delete_memory_removes_its_entries(self, store: Store) -> None:
        memory = make_memory()
        other = make_memory()
        self.seed(store, memory, [("a fact about tea", unit(1), {})])
        (kept,) = self.seed(store, other, [("a fact about tea too", unit(1), {})])
        with store.write() as w:
            w.update_memory(memory.id, {"name": "renamed", "temperature": 0.1})
        with store.read() as r:
            got = r.memory(memory.id)
            assert got is not None and got.name == "renamed" and got.temperature == 0.1
        with store.write() as w:
            w.delete_memory(memory.id)
        with store.read() as r:
            assert r.memory(memory.id) is None
            both = Scope.of(memory.id, other.id)
            hits = r.keyword_candidates(both, "tea", EntryFilter(), 10)
            assert [i for i, _ in hits] == [kept]

"""The store conformance suite: every backend runs these tests unchanged.

Subclass :class:`StoreConformance` in a test module and provide a ``store`` fixture that
yields a fresh, migrated, empty store::

    class TestSQLite(StoreConformance):
        @pytest.fixture
        def store(self, tmp_path):
            s = SQLiteStore(tmp_path / "db.sqlite")
            yield s
            s.close()

Every filter test seeds entries the filter must exclude and checks they are absent.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from memstrata.models import (
    EntryType,
    ForgettingPolicy,
    JobState,
    Memory,
    NewEntry,
    Origin,
    Permission,
    Scope,
    Trust,
    User,
)
from memstrata.store.base import AuditQuery, MemoryQuery, Store
from memstrata.store.filters import EntryFilter

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
DIM = 8


def unit(*components: float) -> NDArray[np.float32]:
    v = np.zeros(DIM, dtype=np.float32)
    v[: len(components)] = components
    return (v / np.linalg.norm(v)).astype(np.float32)


def make_memory(tenant: str = "tenant-a", **kw: Any) -> Memory:
    values: dict[str, Any] = {
        "id": uuid.uuid4().hex,
        "tenant_id": tenant,
        "name": f"memory-{uuid.uuid4().hex[:6]}",
        "memory_types": (EntryType.RAW, EntryType.SEMANTIC),
        "embd_id": "test@Builtin",
        "llm_id": "chat@None",
        "created_at": T0,
        "updated_at": T0,
    }
    values.update(kw)
    return Memory(**values)


def new_entry(memory: Memory, content: str, **kw: Any) -> NewEntry:
    values: dict[str, Any] = {
        "memory_id": memory.id,
        "tenant_id": memory.tenant_id,
        "message_type": EntryType.RAW,
        "content": content,
        "valid_at": T0,
        "size_bytes": len(content.encode()) + 4 * DIM,
    }
    values.update(kw)
    return NewEntry(**values)


class StoreConformance:
    """Behaviour every :class:`Store` must have. Needs a ``store`` fixture."""

    # --- helpers --------------------------------------------------------------------------

    def seed(
        self,
        store: Store,
        memory: Memory,
        rows: list[tuple[str, Any, dict[str, Any]]],
        at: datetime = T0,
    ) -> list[int]:
        """Insert (content, vector, NewEntry overrides) rows; returns their ids."""
        with store.write() as w:
            if w.memory(memory.id) is None:
                w.insert_memory(memory)
            entries = [new_entry(memory, c, **kw) for c, _, kw in rows]
            vectors = np.stack([v for _, v, _ in rows]).astype(np.float32)
            return w.insert_entries(entries, vectors, at)

    def search_ids(
        self, store: Store, memory: Memory, f: EntryFilter, text: str, vector: NDArray[np.float32]
    ) -> tuple[set[int], set[int]]:
        scope = Scope(frozenset({memory.id}))
        with store.read() as r:
            kw = {i for i, _ in r.keyword_candidates(scope, text, f, 100)}
            vec = {i for i, _ in r.vector_candidates(scope, vector, f, 100)}
        return kw, vec

    # --- schema ---------------------------------------------------------------------------

    def test_migrate_is_idempotent(self, store: Store) -> None:
        store.migrate()
        store.migrate()
        memory = make_memory()
        self.seed(store, memory, [("still works", unit(1), {})])

    # --- memories -------------------------------------------------------------------------

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
            both = Scope(frozenset({memory.id, other.id}))
            hits = r.keyword_candidates(both, "tea", EntryFilter(), 10)
            assert [i for i, _ in hits] == [kept]

    # --- entries --------------------------------------------------------------------------

    def test_entry_round_trip_keeps_every_field(self, store: Store) -> None:
        memory = make_memory()
        (i,) = self.seed(
            store,
            memory,
            [
                (
                    "hello",
                    unit(1, 2),
                    {
                        "user_id": "u",
                        "agent_id": "a",
                        "session_id": "s",
                        "source_id": 7,
                        "invalid_at": T0 + timedelta(days=1),
                        "trust": Trust.CONFIRMED,
                        "origin": Origin.IMPORT,
                        "message_type": EntryType.SEMANTIC,
                    },
                )
            ],
        )
        with store.read() as r:
            e = r.entry(Scope(frozenset({memory.id})), i)
            vec = r.vectors([i])[i]
        assert e is not None
        assert (e.content, e.user_id, e.agent_id, e.session_id, e.source_id) == (
            "hello",
            "u",
            "a",
            "s",
            7,
        )
        assert e.message_type is EntryType.SEMANTIC and e.trust is Trust.CONFIRMED
        assert e.origin is Origin.IMPORT and e.invalid_at == T0 + timedelta(days=1)
        assert e.valid_at == T0 and e.recorded_at == T0 and e.status
        np.testing.assert_allclose(vec, unit(1, 2), rtol=1e-6)

    def test_message_ids_increase_and_are_never_reused(self, store: Store) -> None:
        memory = make_memory()
        first = self.seed(store, memory, [("one", unit(1), {}), ("two", unit(1), {})])
        with store.write() as w:
            w.delete_entries(memory.id, [first[1]])
        (third,) = self.seed(store, memory, [("three", unit(1), {})])
        assert first[0] < first[1] < third

    def test_empty_scope_returns_nothing_without_touching_the_index(
        self, store: Store, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        memory = make_memory()
        self.seed(store, memory, [("indexed text", unit(1), {})])

        def boom(*args: object) -> list[tuple[int, float]]:
            raise AssertionError("the index was queried with an empty scope")

        monkeypatch.setattr(store, "keyword_search", boom)
        monkeypatch.setattr(store, "vector_search", boom)
        empty = Scope(frozenset())
        with store.read() as r:
            assert r.keyword_candidates(empty, "indexed", EntryFilter(), 10) == []
            assert r.vector_candidates(empty, unit(1), EntryFilter(), 10) == []
            assert r.entries(empty, EntryFilter()) == ([], 0)

    def test_scope_excludes_other_memories(self, store: Store) -> None:
        mine, theirs = make_memory(), make_memory("tenant-b")
        (a,) = self.seed(store, mine, [("shared secret word", unit(1), {})])
        self.seed(store, theirs, [("shared secret word", unit(1), {})])
        kw, vec = self.search_ids(store, mine, EntryFilter(), "secret", unit(1))
        assert kw == {a} and vec == {a}

    @pytest.mark.parametrize(
        ("field", "excluded", "f"),
        [
            ("status", {"status": False}, EntryFilter(enabled_only=True)),
            ("trust", {"trust": Trust.REJECTED}, EntryFilter(hide_rejected=True)),
            (
                "type",
                {"message_type": EntryType.SEMANTIC},
                EntryFilter(types=frozenset({EntryType.RAW})),
            ),
            ("user", {"user_id": "other"}, EntryFilter(user_id="")),
            ("agent", {"agent_id": "other"}, EntryFilter(agent_ids=frozenset({""}))),
            ("session", {"session_id": "other"}, EntryFilter(session_id="")),
            (
                "expired",
                {"invalid_at": T0 + timedelta(hours=1)},
                EntryFilter(valid_on=T0 + timedelta(hours=2)),
            ),
            (
                "future",
                {"valid_at": T0 + timedelta(days=3)},
                EntryFilter(valid_on=T0 + timedelta(hours=2)),
            ),
        ],
    )
    def test_filters_exclude_inside_the_store(
        self, store: Store, field: str, excluded: dict[str, Any], f: EntryFilter
    ) -> None:
        memory = make_memory()
        kept, _dropped = self.seed(
            store,
            memory,
            [
                ("the zebra crossing", unit(1, 0.1), {}),
                ("the zebra crossing", unit(1, 0.2), excluded),
            ],
        )
        kw, vec = self.search_ids(store, memory, f, "zebra", unit(1))
        assert kw == {kept} and vec == {kept}, field
        with store.read() as r:
            listed, total = r.entries(Scope(frozenset({memory.id})), f)
        assert [e.message_id for e in listed] == [kept] and total == 1

    def test_a_filter_that_drops_the_best_matches_still_fills_the_limit(self, store: Store) -> None:
        memory = make_memory()
        hidden = [("kiwi kiwi kiwi kiwi", unit(1, 0.01 * i), {"status": False}) for i in range(400)]
        shown: list[tuple[str, Any, dict[str, Any]]] = [
            ("kiwi and other fruit in a long sentence", unit(0.2, 1), {}) for _ in range(12)
        ]
        ids = self.seed(store, memory, hidden + shown)
        f = EntryFilter(enabled_only=True)
        scope = Scope(frozenset({memory.id}))
        with store.read() as r:
            kw = r.keyword_candidates(scope, "kiwi", f, 10)
            vec = r.vector_candidates(scope, unit(1), f, 10)
        visible = set(ids[400:])
        assert len(kw) == 10 and {i for i, _ in kw} <= visible
        assert len(vec) == 10 and {i for i, _ in vec} <= visible

    def test_forgotten_and_retired_follow_the_record_clock(self, store: Store) -> None:
        memory = make_memory()
        a, b, c = self.seed(
            store,
            memory,
            [
                ("penguin facts", unit(1), {}),
                ("penguin facts", unit(1), {}),
                ("penguin facts", unit(1), {}),
            ],
        )
        later = T0 + timedelta(days=1)
        with store.write() as w:
            w.update_entries([b], {"forget_at": later})
            w.update_entries([c], {"retired_at": later})
        now = EntryFilter(hide_forgotten=True, current_only=True)
        assert self.search_ids(store, memory, now, "penguin", unit(1)) == ({a}, {a})
        before = EntryFilter(hide_forgotten=True, as_of=T0 + timedelta(hours=1))
        assert self.search_ids(store, memory, before, "penguin", unit(1)) == ({a, b, c},) * 2
        too_early = EntryFilter(as_of=T0 - timedelta(hours=1))
        assert self.search_ids(store, memory, too_early, "penguin", unit(1)) == (set(), set())

    def test_session_substring_is_literal(self, store: Store) -> None:
        memory = make_memory()
        a, _ = self.seed(
            store,
            memory,
            [("x", unit(1), {"session_id": "run_%42"}), ("y", unit(1), {"session_id": "run-x42"})],
        )
        with store.read() as r:
            found, _ = r.entries(Scope(frozenset({memory.id})), EntryFilter(session_contains="_%4"))
        assert [e.message_id for e in found] == [a]

    def test_neighbours_follow_the_conversation(self, store: Store) -> None:
        memory = make_memory()
        later = T0 + timedelta(minutes=1)
        rows: list[tuple[str, Any, dict[str, Any]]] = [
            ("s1 first", unit(1), {"session_id": "s1"}),
            ("s2 only", unit(1), {"session_id": "s2"}),
            ("s1 third, written early", unit(1), {"session_id": "s1", "valid_at": later}),
            ("s1 second", unit(1), {"session_id": "s1"}),
            ("s1 other user", unit(1), {"session_id": "s1", "user_id": "u2"}),
            ("s1 hidden", unit(1), {"session_id": "s1", "status": False}),
            ("s1 fact", unit(1), {"session_id": "s1", "message_type": EntryType.SEMANTIC}),
        ]
        first, only, third, second, other, _hidden, fact = self.seed(store, memory, rows)
        f = EntryFilter(enabled_only=True)
        with store.read() as r:
            got = r.neighbours(Scope(frozenset({memory.id})), [first, second, only, fact], f, 2)
            none = r.neighbours(Scope(frozenset()), [first], f, 2)
        assert got[first] == ((second,), (third,))
        assert got[second] == ((first, third), ())
        assert got[only] == ((), ())
        assert fact not in got and other not in got[first][0] and none == {}

    # --- ranking --------------------------------------------------------------------------

    def test_keyword_search_ranks_and_stems(self, store: Store) -> None:
        memory = make_memory()
        strong, weak, _ = self.seed(
            store,
            memory,
            [
                ("hiking hiking in the mountains, hiked again", unit(1), {}),
                ("we talked about a hike once, then cooking and painting", unit(1), {}),
                ("completely unrelated cooking text", unit(1), {}),
            ],
        )
        with store.read() as r:
            hits = r.keyword_candidates(Scope(frozenset({memory.id})), "Hikes?", EntryFilter(), 10)
        assert [i for i, _ in hits] == [strong, weak]
        assert hits[0][1] > hits[1][1] > 0

    def test_keyword_ranking_uses_the_statistics_of_the_memories_searched(
        self, store: Store
    ) -> None:
        mine, other = make_memory(), make_memory("tenant-b")
        rows: list[tuple[str, Any, dict[str, Any]]] = [
            ("caroline went to the lake", unit(1), {}),
            ("caroline and a friend talked about the lake", unit(1), {}),
            ("the lake was cold", unit(1), {}),
            ("melanie painted at dawn", unit(1), {}),
            ("caroline bought paint", unit(1), {}),
            ("a quiet sunday", unit(1), {}),
        ]
        ids = self.seed(store, mine, rows)
        scope = Scope(frozenset({mine.id}))

        def ranking() -> list[int]:
            with store.read() as r:
                return [
                    i for i, _ in r.keyword_candidates(scope, "melanie lake", EntryFilter(), 10)
                ]

        before = ranking()
        self.seed(store, other, [("melanie " * 5, unit(1), {}) for _ in range(60)])
        assert before[0] == ids[3]  # the rare word of this memory leads
        assert set(before) == {ids[0], ids[1], ids[2], ids[3]}
        assert ranking() == before

    def test_keyword_search_ignores_query_syntax(self, store: Store) -> None:
        memory = make_memory()
        (a,) = self.seed(store, memory, [("quotes and stars", unit(1), {})])
        with store.read() as r:
            hits = r.keyword_candidates(
                Scope(frozenset({memory.id})), 'quotes" OR * NEAR( AND -stars:', EntryFilter(), 5
            )
            assert [i for i, _ in hits] == [a]
            assert (
                r.keyword_candidates(Scope(frozenset({memory.id})), "the of ...", EntryFilter(), 5)
                == []
            )

    def test_vector_search_orders_by_cosine(self, store: Store) -> None:
        memory = make_memory()
        _far, near, mid = self.seed(
            store, memory, [("a", unit(0, 1), {}), ("b", unit(1, 0.05), {}), ("c", unit(1, 1), {})]
        )
        with store.read() as r:
            hits = r.vector_candidates(Scope(frozenset({memory.id})), unit(1), EntryFilter(), 2)
        assert [i for i, _ in hits] == [near, mid]
        assert hits[0][1] == pytest.approx(float(unit(1, 0.05) @ unit(1)), abs=1e-5)

    # --- deletion and accounting ----------------------------------------------------------

    def test_delete_removes_from_both_indexes_and_accounting(self, store: Store) -> None:
        memory = make_memory()
        a, b = self.seed(
            store, memory, [("walrus tusk", unit(1), {}), ("walrus again", unit(1), {})]
        )
        with store.read() as r:
            m = r.memory(memory.id)
            assert m is not None and m.entry_count == 2
            size_b = r.get_entries(Scope(frozenset({memory.id})), [b])[b].size_bytes
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
            w.audit(at=T0, actor="x", action="entry.add", memory_id=memory.id)
            raise RuntimeError("boom")
        with store.read() as r:
            entries, total = r.entries(Scope(frozenset({memory.id})), EntryFilter())
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

    # --- audit, evidence, tombstones, jobs, users -----------------------------------------

    def test_audit_query_filters(self, store: Store) -> None:
        m1, m2 = make_memory(), make_memory()
        with store.write() as w:
            w.audit(at=T0, actor="alice", action="entry.add", memory_id=m1.id, message_id=1)
            w.audit(
                at=T0 + timedelta(hours=1),
                actor="bob",
                action="entry.forget",
                memory_id=m1.id,
                message_id=1,
                before={"forget_at": None},
            )
            w.audit(at=T0, actor="alice", action="entry.add", memory_id=m2.id, message_id=2)
        with store.read() as r:
            only_m1, total = r.audit_events(AuditQuery(memory_ids=frozenset({m1.id})))
            assert total == 2 and {e.memory_id for e in only_m1} == {m1.id}
            bob, _ = r.audit_events(AuditQuery(actor="bob"))
            assert [e.action for e in bob] == ["entry.forget"]
            assert bob[0].before == {"forget_at": None}
            late, _ = r.audit_events(AuditQuery(since=T0 + timedelta(minutes=30)))
            assert [e.actor for e in late] == ["bob"]
            assert r.audit_events(AuditQuery(memory_ids=frozenset())) == ([], 0)

    def test_evidence_and_tombstones(self, store: Store) -> None:
        memory = make_memory()
        (a,) = self.seed(store, memory, [("fact", unit(1), {})])
        with store.write() as w:
            assert w.add_evidence(a, 41, T0) is True
            assert w.add_evidence(a, 41, T0) is False
        with store.read() as r:
            assert r.evidence(a) == [41]

    def test_jobs_enqueue_and_update(self, store: Store) -> None:
        with store.write() as w:
            j = w.enqueue_job(kind="extraction", tenant_id="t", memory_id="m", message_id=5, at=T0)
            w.update_job(j, {"state": JobState.DONE, "progress": 1.0, "result": {"added": 2}})
        with store.read() as r:
            job = r.job(j)
            assert job is not None and job.state is JobState.DONE and job.result == {"added": 2}
            assert r.jobs_for_messages([5])[5].id == j
            assert r.jobs(frozenset({"other"})) == []

    def test_users_teams_and_keys(self, store: Store) -> None:
        alice = User("alice", "Alice", False, T0)
        with store.write() as w:
            w.insert_user(alice)
            w.add_member("bob", "alice")
            w.add_member("bob", "alice")
            w.insert_api_key(key_id="k1", user_id="alice", key_hash="h", name="", scope=None, at=T0)
        with store.read() as r:
            assert r.user("alice") == alice and r.user_named("Alice") == alice
            assert r.teams_of("alice") == frozenset({"alice", "bob"})
            assert r.api_key("h") == ("k1", "alice", None)
        with store.write() as w:
            assert w.revoke_api_key("k1", T0) is True
        with store.read() as r:
            assert r.api_key("h") is None

"""Conformance: entries keep every field, ids only grow, and scope and filters exclude inside
the store (every filter test seeds an entry the filter must drop), in listings, search
legs and conversation neighbours alike."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import numpy as np
import pytest

from recallery.models import EntryType, Origin, Scope, Trust
from recallery.store.base import Store
from recallery.store.filters import EntryFilter
from recallery.testing.conformance.support import (
    T0,
    Conformance,
    Seed,
    make_memory,
    new_entry,
    unit,
)


class EntryConformance(Conformance):
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
            e = r.entry(Scope.of(memory.id), i)
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

    def test_a_batch_over_two_memories_keeps_order_fields_and_accounts_per_memory(
        self, store: Store
    ) -> None:
        a, b = make_memory(), make_memory()
        with store.write() as w:
            w.insert_memory(a)
            w.insert_memory(b)
            entries = [
                new_entry(m, f"turn {n} about kiwis", user_id=f"u{n}", supersedes=n or None)
                for n, m in enumerate([a, b, a, a, b] * 40)
            ]
            vectors = np.stack([unit(1, n) for n in range(len(entries))])
            ids = w.insert_entries(entries, vectors, T0)
        assert ids == sorted(ids) and len(set(ids)) == len(entries)
        with store.read() as r:
            stored = r.get_entries(Scope.of(a.id, b.id), ids)
            found = r.vectors(ids)
            used = {m.id: (m.used_bytes, m.entry_count) for m in r.memories([a.id, b.id])}
            hits = r.keyword_candidates(Scope.of(b.id), "kiwis", EntryFilter(), 500)
        for i, e in zip(ids, entries, strict=True):
            assert (stored[i].memory_id, stored[i].content, stored[i].user_id) == (
                e.memory_id,
                e.content,
                e.user_id,
            )
            assert stored[i].supersedes == e.supersedes
        np.testing.assert_allclose(np.stack([found[i] for i in ids]), vectors, rtol=1e-6)
        for m in (a, b):
            mine = [e for e in entries if e.memory_id == m.id]
            assert used[m.id] == (sum(e.size_bytes for e in mine), len(mine))
        in_b = {i for i, e in zip(ids, entries, strict=True) if e.memory_id == b.id}
        assert {i for i, _ in hits} == in_b

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
        empty = Scope.of()
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

    def test_lengths_count_characters_of_raw_turns_within_scope(self, store: Store) -> None:
        mine, theirs = make_memory(), make_memory("tenant-b")
        a, fact, hidden = self.seed(
            store,
            mine,
            [
                ("naïve café ☕", unit(1), {}),
                ("an extracted fact", unit(1), {"message_type": EntryType.SEMANTIC}),
                ("a disabled turn", unit(1), {"status": False}),
            ],
        )
        (b,) = self.seed(store, theirs, [("a much longer text of theirs", unit(1), {})])
        with store.read() as r:
            found = r.lengths(Scope.of(mine.id), [a, fact, hidden, b, 10**9])
            assert found == {a: len("naïve café ☕"), hidden: len("a disabled turn")}
            assert r.lengths(Scope.of(mine.id), []) == {}
        with store.write() as w:
            w.delete_entries(mine.id, [a])
        with store.read() as r:  # an erased turn's length is gone with it
            assert r.lengths(Scope.of(mine.id), [a, hidden]) == {hidden: len("a disabled turn")}

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
            listed, total = r.entries(Scope.of(memory.id), f)
        assert [e.message_id for e in listed] == [kept] and total == 1

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
            found, _ = r.entries(Scope.of(memory.id), EntryFilter(session_contains="_%4"))
        assert [e.message_id for e in found] == [a]

    def test_text_filter_is_a_substring_in_any_case(self, store: Store) -> None:
        memory = make_memory()
        fact = {"message_type": EntryType.SEMANTIC}
        kept, pieces, raw, literal, _ = self.seed(
            store,
            memory,
            [
                ("The CAT IS called Miso", unit(1), fact),
                ("the cat it is", unit(1), fact),  # every three letters of "cat is", apart
                ("my cat is Miso", unit(1), {}),  # a raw turn
                ("50%_off", unit(1), fact),
                ("a dog is here", unit(1), fact),
            ],
        )
        facts = frozenset(EntryType.extracted())

        def found(text: str, types: frozenset[EntryType] | None = facts) -> set[int]:
            with store.read() as r:
                listed, total = r.entries(
                    Scope.of(memory.id), EntryFilter(types=types, content_contains=text)
                )
            assert total == len(listed)
            return {e.message_id for e in listed}

        assert found("cat is") == {kept}
        assert found("Cat Is", types=None) == {kept, raw}
        assert found("ca") == {kept, pieces}  # shorter than any index's piece
        assert found("0%_") == {literal} and found("0%o") == set()
        with store.write() as w:
            w.delete_entries(memory.id, [kept])
        assert found("cat is") == set()

    def test_neighbours_follow_the_conversation(self, store: Store) -> None:
        memory = make_memory()
        later = T0 + timedelta(minutes=1)
        rows: list[Seed] = [
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
            got = r.neighbours(Scope.of(memory.id), [first, second, only, fact], f, 2)
            none = r.neighbours(Scope.of(), [first], f, 2)
        assert got[first] == ((second,), (third,))
        assert got[second] == ((first, third), ())
        assert got[only] == ((), ())
        assert fact not in got and other not in got[first][0] and none == {}

    def test_their_neighbours_are_a_second_lookups(self, store: Store) -> None:
        """``theirs``: the neighbours' own neighbours from one lookup, as a second lookup of
        them finds, with hidden turns on the way and a conversation that ends."""
        memory = make_memory()
        hidden = {2, 3, 7, 12}
        rows: list[Seed] = [
            (f"turn {n}", unit(1), {"session_id": "s1", "status": n not in hidden})
            for n in range(16)
        ]
        turns = self.seed(store, memory, rows)
        scope, f = Scope.of(memory.id), EntryFilter(enabled_only=True)
        with store.read() as r:
            for span in (1, 2, 3):
                asked = [turns[0], turns[6], turns[14]]
                first = r.neighbours(scope, asked, f, span)
                joined = {n for rings in first.values() for ring in rings for n in ring}
                second = r.neighbours(scope, joined - first.keys(), f, span)
                assert r.neighbours(scope, asked, f, span, theirs=True) == first | second
                assert len(second) > 1

    def test_cosines_are_those_of_the_stored_vectors(self, store: Store) -> None:
        """What search gives a candidate that only a keyword leg found: its stored vector's
        cosine with the query (the server computes it on PostgreSQL), 0 for a vector of
        another dimension, nothing for an id without a vector."""
        memory = make_memory()
        with store.write() as w:
            w.insert_memory(memory)
            entries = [new_entry(memory, f"turn {n}") for n in range(12)]
            vectors = np.stack([unit(1, 0.3 * n, n % 3) for n in range(12)])
            ids = w.insert_entries(entries, vectors, T0)
            (odd,) = w.insert_entries([new_entry(memory, "short")], np.ones((1, 3), np.float32), T0)
        query = unit(2, 1, 1)
        with store.read() as r:
            got = r.cosines([*ids, odd, max(ids) + 1000], query, Scope.of(memory.id))
        assert sorted(got) == sorted([*ids, odd])
        np.testing.assert_allclose([got[i] for i in ids], vectors @ query, atol=1e-6)
        assert got[odd] == 0.0, got[odd]

"""Conformance: the two search legs rank as specified (BM25 over the memories searched,
cosine), ignore query syntax, and still fill their limit when the filter drops the best
matches."""

from __future__ import annotations

import pytest

from recallery.models import Scope
from recallery.store.base import Store
from recallery.store.filters import EntryFilter
from recallery.testing.conformance.support import Conformance, Seed, make_memory, unit


class SearchConformance(Conformance):
    def test_a_filter_that_drops_the_best_matches_still_fills_the_limit(self, store: Store) -> None:
        memory = make_memory()
        hidden = [("kiwi kiwi kiwi kiwi", unit(1, 0.01 * i), {"status": False}) for i in range(400)]
        shown: list[Seed] = [
            ("kiwi and other fruit in a long sentence", unit(0.2, 1), {}) for _ in range(12)
        ]
        ids = self.seed(store, memory, hidden + shown)
        f = EntryFilter(enabled_only=True)
        scope = Scope.of(memory.id)
        with store.read() as r:
            kw = r.keyword_candidates(scope, "kiwi", f, 10)
            vec = r.vector_candidates(scope, unit(1), f, 10)
        visible = set(ids[400:])
        assert len(kw) == 10 and {i for i, _ in kw} <= visible
        assert len(vec) == 10 and {i for i, _ in vec} <= visible

    def test_equal_scores_come_newest_first_in_both_legs(self, store: Store) -> None:
        memory = make_memory()
        short = self.seed(store, memory, [("tea", unit(1, 0.5), {})] * 3)
        same = self.seed(store, memory, [("tea with milk", unit(1), {})] * 80)
        scope = Scope.of(memory.id)
        with store.read() as r:
            kw = r.keyword_candidates(scope, "tea", EntryFilter(), 10)
            vec = r.vector_candidates(scope, unit(1), EntryFilter(), 10)
        assert [i for i, _ in kw] == sorted(short, reverse=True) + sorted(same)[::-1][:7]
        assert [i for i, _ in vec][:7] == sorted(same)[::-1][:7]

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
            hits = r.keyword_candidates(Scope.of(memory.id), "Hikes?", EntryFilter(), 10)
        assert [i for i, _ in hits] == [strong, weak]
        assert hits[0][1] > hits[1][1] > 0

    def test_keyword_ranking_uses_the_statistics_of_the_memories_searched(
        self, store: Store
    ) -> None:
        mine, other = make_memory(), make_memory("tenant-b")
        rows: list[Seed] = [
            ("caroline went to the lake", unit(1), {}),
            ("caroline and a friend talked about the lake", unit(1), {}),
            ("the lake was cold", unit(1), {}),
            ("melanie painted at dawn", unit(1), {}),
            ("caroline bought paint", unit(1), {}),
            ("a quiet sunday", unit(1), {}),
        ]
        ids = self.seed(store, mine, rows)
        scope = Scope.of(mine.id)

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
                Scope.of(memory.id), 'quotes" OR * NEAR( AND -stars:', EntryFilter(), 5
            )
            assert [i for i, _ in hits] == [a]
            assert r.keyword_candidates(Scope.of(memory.id), "the of ...", EntryFilter(), 5) == []

    def test_vector_search_orders_by_cosine(self, store: Store) -> None:
        memory = make_memory()
        _far, near, mid = self.seed(
            store, memory, [("a", unit(0, 1), {}), ("b", unit(1, 0.05), {}), ("c", unit(1, 1), {})]
        )
        with store.read() as r:
            hits = r.vector_candidates(Scope.of(memory.id), unit(1), EntryFilter(), 2)
        assert [i for i, _ in hits] == [near, mid]
        assert hits[0][1] == pytest.approx(float(unit(1, 0.05) @ unit(1)), abs=1e-5)

"""The SQLite store's in-process keyword and conversation indexes against their references:
FTS5's own bm25() and the portable SQL neighbour lookup of the Store base class."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from recallery.models import EntryType, Scope
from recallery.store.base import Store
from recallery.store.filters import EntryFilter
from recallery.store.sqlite import SQLiteStore
from recallery.store.sqlite.keywords import query_terms
from recallery.testing.bm25 import corpus, fts5_bm25
from recallery.testing.conformance import T0, StoreConformance, make_memory, unit


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "indexes.db")
    yield s
    s.close()


def keyword(store: SQLiteStore, memory_id: str, query: str, limit: int = 300) -> list[Any]:
    with store.read() as r:
        return r.keyword_candidates(Scope(frozenset({memory_id})), query, EntryFilter(), limit)


def test_bm25_scores_equal_fts5s_own(store: SQLiteStore) -> None:
    """On a corpus without the words the two Porter implementations stem apart."""
    memory, texts = make_memory(), corpus(300)
    ids = StoreConformance().seed(store, memory, [(t, unit(1), {}) for t in texts])
    for query in ("hiking", "Paris marathon", "teachers teaching piano", "rivers river", "dog"):
        got = [(ids.index(i), score) for i, score in keyword(store, memory.id, query)]
        reference = fts5_bm25(texts, query)
        assert len(got) == len(reference) > 5, query
        assert sorted((p, round(s, 9)) for p, s in got) == sorted(
            (p, round(s, 9)) for p, s in reference
        ), query


def test_rows_written_after_a_search_are_found_by_the_next(store: SQLiteStore) -> None:
    memory = make_memory()
    seed = StoreConformance().seed
    (first,) = seed(store, memory, [("a walk by the harbour", unit(1), {})])
    assert [i for i, _ in keyword(store, memory.id, "harbour")] == [first]
    (second,) = seed(store, memory, [("the harbour at night, harbour lights", unit(1), {})])
    assert [i for i, _ in keyword(store, memory.id, "harbour")] == [second, first]


def test_erased_rows_leave_the_results_and_the_statistics(store: SQLiteStore) -> None:
    memory = make_memory()
    texts = ["violin lessons", "violin and cello", "cello", "piano", "flute", "drums"]
    gone, kept, *_ = StoreConformance().seed(store, memory, [(t, unit(1), {}) for t in texts])
    before = dict(keyword(store, memory.id, "violin"))
    with store.write() as w:
        w.delete_entries(memory.id, [gone])
    after = dict(keyword(store, memory.id, "violin"))
    assert set(after) == {kept}
    # one document fewer and no longer holding "violin": the idf rises
    assert after[kept] > before[kept]


def test_query_words_are_folded_and_stemmed_like_the_text() -> None:
    assert query_terms("The Cafés of RUNNING runners!") == ["cafe", "run", "runner"]
    assert query_terms("a snake_case") == ["snake", "case"]
    # no stop word names the language: each word's stems in the other Latin languages too
    assert query_terms("snake_case") == ["snake", "snak", "case", "cas"]
    assert query_terms("the of and") == []
    assert query_terms("used by us") == ["us", "us"]  # "us" itself is too short to stem


def test_conversation_index_agrees_with_the_sql_lookup(store: SQLiteStore) -> None:
    """Random conversations with shared valid times, backdated turns, other entry types,
    a second memory and erased turns: the in-process lookup equals the portable SQL one."""
    rng = np.random.default_rng(3)
    memories = [make_memory(), make_memory()]
    ids: list[int] = []
    for _ in range(6):
        for memory in memories:
            rows: list[tuple[str, Any, dict[str, Any]]] = [
                (
                    f"turn {n}",
                    unit(1),
                    {
                        "user_id": f"u{rng.integers(2)}",
                        "session_id": f"s{rng.integers(3)}",
                        "valid_at": T0 + timedelta(minutes=int(rng.integers(8))),
                        "message_type": EntryType.RAW
                        if rng.random() < 0.85
                        else EntryType.SEMANTIC,
                    },
                )
                for n in range(25)
            ]
            ids += StoreConformance().seed(store, memory, rows)
    erased = [int(i) for i in rng.choice(ids, 30, replace=False)]
    with store.write() as w:
        for memory in memories:
            w.delete_entries(memory.id, erased)
    scope = Scope(frozenset(m.id for m in memories))
    with store.read() as r:
        fast = store.conversation_near(r.conn, scope, ids, 3)
        reference = Store.conversation_near(store, r.conn, scope, ids, 3)
    assert fast == reference
    assert len(fast) > 200 and not set(fast) & set(erased)
    with store.read() as r:  # and each raw turn's length, as SQL counts it
        lengths = r.lengths(scope, ids)
        assert store.held_lengths(r.conn, scope, ids) == lengths  # read from the index
        counted = r.conn.execute(
            "SELECT message_id, length(content) FROM entries WHERE message_type = 'raw'"
        )
    assert lengths == {int(i): int(n) for i, n in counted} and set(lengths) == set(fast)
    with store.read() as r:
        one = store.conversation_near(r.conn, Scope(frozenset({memories[0].id})), ids, 3)
    assert set(one) < set(fast) and one == {i: fast[i] for i in one}


def test_warming_catches_every_index_up_with_the_file(store: SQLiteStore) -> None:
    memory = make_memory()
    ids = StoreConformance().seed(
        store, memory, [(f"turn {n} about gardens", unit(1), {"session_id": "s"}) for n in range(5)]
    )
    store.warm()
    held = store._indexes
    marks = {held.keywords._high, held.vectors._high, held.conversations._high, held.columns._high}
    assert marks == {ids[-1]}
    with store.read() as r:  # and what they hold is what a search would have loaded
        assert (
            len(r.keyword_candidates(Scope(frozenset({memory.id})), "gardens", EntryFilter(), 10))
            == 5
        )
        near = store.conversation_near(r.conn, Scope(frozenset({memory.id})), [ids[2]], 1)
    assert near == {ids[2]: ((ids[1],), (ids[3],))}

"""The SQLite store's in-memory filter columns and change log: the in-memory check answers
exactly what the SQL check answers, over random rows, filters, state changes and erasures;
a change or erasure made by another process (another store on the same file) counts from the
next search on, statistics included; and a write transaction that rolls back leaves nothing
behind in any index."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import fields, replace
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recallery.models import EntryType, Scope, Trust
from recallery.store.filters import EntryFilter
from recallery.store.reader import Reader
from recallery.store.sqlite import SQLiteStore
from recallery.store.sqlite.columns import HELD
from recallery.testing.conformance import T0, StoreConformance, make_memory, new_entry, unit

USERS, SESSIONS = ["", "u1", "u2"], ["", "s1", "s2"]
TYPES = [EntryType.RAW, EntryType.SEMANTIC, EntryType.EPISODIC]


def hours(n: int) -> datetime:
    return T0 + timedelta(hours=n)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "columns.db"


@pytest.fixture
def store(path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(path)
    yield s
    s.close()


def seeded(store: SQLiteStore, n: int = 60, seed: int = 0) -> tuple[str, list[int]]:
    """``n`` rows of two memories, with varied ids, types, times and states."""
    rng = np.random.default_rng(seed)
    memory, other = make_memory(), make_memory()
    ids: list[int] = []
    for m in (memory, other):
        rows = [
            (f"turn {i} about tea", unit(1, float(i)), {
                "message_type": TYPES[i % 3],
                "user_id": USERS[int(rng.integers(3))],
                "agent_id": ["", "a1"][i % 2],
                "session_id": SESSIONS[int(rng.integers(3))],
                "valid_at": hours(int(rng.integers(0, 4))),
                "invalid_at": None if i % 3 else hours(int(rng.integers(2, 6))),
                "trust": list(Trust)[int(rng.integers(len(Trust)))],
                "status": bool(i % 5),
            })
            for i in range(n // 2)
        ]  # fmt: skip
        for half in (rows[::2], rows[1::2]):  # two recording times per memory
            ids += StoreConformance().seed(store, m, half, at=hours(int(rng.integers(0, 4))))
    return memory.id, ids


def change(store: SQLiteStore, ids: list[int], seed: int) -> None:
    """Retire, forget, disable, review and erase some of ``ids``."""
    rng = np.random.default_rng(seed)
    pick = lambda k: sorted({ids[int(i)] for i in rng.integers(0, len(ids), k)})  # noqa: E731
    with store.write() as w:
        w.update_entries(pick(5), {"retired_at": hours(7)})
        w.update_entries(pick(5), {"forget_at": hours(3)})
        w.update_entries(pick(5), {"status": 0})
        w.update_entries(pick(5), {"trust": Trust.REJECTED.value})
        w.update_entries(pick(3), {"status": 1, "forget_at": None})
        gone = pick(4)
        every = Scope(frozenset(r[0] for r in w.conn.execute("SELECT id FROM memories")))
        for memory_id in {e.memory_id for e in w.get_entries(every, gone).values()}:
            w.delete_entries(memory_id, gone)


#: A strategy for every field the in-memory columns evaluate (held to ``columns.HELD`` below).
FIELDS = dict(
    types=st.none() | st.frozensets(st.sampled_from(TYPES), max_size=2),
    user_id=st.none() | st.sampled_from([*USERS, "nobody"]),
    agent_ids=st.none() | st.frozensets(st.sampled_from(["", "a1", "a9"]), max_size=2),
    session_id=st.none() | st.sampled_from(SESSIONS),
    enabled_only=st.booleans(),
    disabled_only=st.booleans(),
    hide_forgotten=st.booleans(),
    forgotten_only=st.booleans(),
    hide_rejected=st.booleans(),
    trust=st.none() | st.frozensets(st.sampled_from(list(Trust)), max_size=2),
    current_only=st.booleans(),
    valid_on=st.none() | st.integers(0, 7).map(hours),
    as_of=st.none() | st.integers(0, 5).map(hours),
    recorded_since=st.none() | st.integers(0, 4).map(hours),
    recorded_before=st.none() | st.integers(0, 4).map(hours),
    message_ids=st.none() | st.frozensets(st.integers(0, 60), max_size=8),
)
filters = st.builds(EntryFilter, **FIELDS)  # type: ignore[arg-type]


def test_the_property_test_generates_every_field_the_columns_hold() -> None:
    assert set(FIELDS) == HELD


def test_every_other_filter_field_goes_to_sql(store: SQLiteStore) -> None:
    """Any field not held in memory, including one added to ``EntryFilter`` later, makes the
    in-memory check step aside: search then filters in SQL, never ignoring the field."""
    seeded(store)
    others = [f.name for f in fields(EntryFilter) if f.name not in HELD]
    assert others  # session substrings, source ids, extracted types at least
    with store.read() as r:
        for name in others:
            f = replace(EntryFilter(), **{name: object()})
            assert store.held_filter(r.conn, Scope.of("m"), f) is None, name


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(f=filters, also_other=st.booleans(), changed=st.booleans())
def test_the_in_memory_check_is_the_sql_check(
    tmp_path_factory: pytest.TempPathFactory, f: EntryFilter, also_other: bool, changed: bool
) -> None:
    store = SQLiteStore(tmp_path_factory.mktemp("prop") / "p.db")
    try:
        memory_id, ids = seeded(store)
        if changed:
            change(store, ids, seed=1)
        with store.read() as r:
            memories = [row[0] for row in r.conn.execute("SELECT id FROM memories")]
            scope = Scope(frozenset(memories if also_other else [memory_id]))
            asked = [*ids, max(ids) + 7]  # one id no row has
            held = store.held_filter(r.conn, scope, f)
            assert held is not None
            # the SQL check takes the ids asked as its message_ids: ask it for those f allows
            wanted = [i for i in asked if f.message_ids is None or i in f.message_ids]
            assert held(asked) == r.passing(scope, f, wanted)
    finally:
        store.close()


def single_conditions() -> list[EntryFilter]:
    """Every condition on its own, at every boundary the seeded rows have, and the filter
    search uses at every valid and record time."""
    times = [hours(n) for n in range(8)]
    out = [EntryFilter(current_only=False)]
    out += [EntryFilter(types=frozenset({t})) for t in TYPES]
    out += [EntryFilter(user_id=u) for u in [*USERS, "nobody"]]
    out += [EntryFilter(agent_ids=frozenset({a})) for a in ["", "a1", "a9"]]
    out += [EntryFilter(session_id=s) for s in SESSIONS]
    out += [EntryFilter(trust=frozenset({t})) for t in Trust]
    flags = ("enabled_only", "disabled_only", "hide_forgotten", "forgotten_only", "hide_rejected")
    out += [EntryFilter(**{flag: True}) for flag in flags]  # type: ignore[arg-type]
    out += [EntryFilter(valid_on=t) for t in times]
    out += [EntryFilter(as_of=t, hide_forgotten=True) for t in times]
    out += [EntryFilter(recorded_since=t) for t in times] + [
        EntryFilter(recorded_before=t) for t in times
    ]
    out += [EntryFilter.retrieval(valid_on=v, as_of=a) for v in times for a in [None, *times[:6]]]
    return out


@pytest.mark.parametrize("changed", [False, True])
def test_every_condition_at_every_boundary_matches_sql(store: SQLiteStore, changed: bool) -> None:
    memory_id, ids = seeded(store, n=120, seed=3)
    if changed:
        change(store, ids, seed=4)
    scope = Scope.of(memory_id)
    with store.read() as r:
        for f in single_conditions():
            held = store.held_filter(r.conn, scope, f)
            assert held is not None and held(ids) == r.passing(scope, f, ids), f


def test_filters_the_columns_cannot_answer_go_to_sql(store: SQLiteStore) -> None:
    seeded(store)
    with store.read() as r:
        for f in (EntryFilter(session_contains="s"), EntryFilter(source_ids=frozenset({1})),
                  EntryFilter(extracted_types=frozenset({EntryType.SEMANTIC}))):  # fmt: skip
            assert store.held_filter(r.conn, Scope.of("m"), f) is None
    with store.write() as w:  # a write transaction checks its own changes in SQL
        assert store.held_filter(w.conn, Scope.of("m"), EntryFilter()) is None


def test_another_processs_changes_count_from_the_next_search(path: Path) -> None:
    """Two stores on one file share no memory, as two processes would not."""
    here, there = SQLiteStore(path), SQLiteStore(path)
    try:
        memory = make_memory()
        texts = ["violin lessons", "violin and cello", "cello", "piano", "flute", "drums"]
        gone, kept, hidden, *_ = StoreConformance().seed(
            here, memory, [(t, unit(1, float(i)), {}) for i, t in enumerate(texts)]
        )
        scope, f = Scope.of(memory.id), EntryFilter(enabled_only=True)
        with here.read() as r:  # this process has loaded every index
            before = dict(r.keyword_candidates(scope, "violin cello", f, 10))
        assert {gone, kept, hidden} <= before.keys()
        with there.write() as w:
            w.delete_entries(memory.id, [gone])
            w.update_entries([hidden], {"status": 0})
        with here.read() as r:
            after = dict(r.keyword_candidates(scope, "violin cello", f, 10))
            near = {i for i, _ in r.vector_candidates(scope, unit(1, 0.0), f, 10)}
            turns = r.neighbours(scope, [kept], EntryFilter(), 1)
        assert gone not in after and hidden not in after and gone not in near and hidden not in near
        assert gone not in {n for rings in turns.values() for ring in rings for n in ring}
        fresh = SQLiteStore(path)  # a process started after the erasure
        try:
            with fresh.read() as r:
                rebuilt = dict(r.keyword_candidates(scope, "violin cello", f, 10))
                assert r.neighbours(scope, [kept], EntryFilter(), 1) == turns
        finally:
            fresh.close()
        assert after == pytest.approx(rebuilt)  # BM25 statistics no longer count the erased row
        assert after[kept] != pytest.approx(before[kept])
    finally:
        here.close()
        there.close()


def test_a_rolled_back_write_leaves_no_row_in_any_index(store: SQLiteStore) -> None:
    """A search inside a write transaction (extraction checks near entries there) reads the
    indexes from committed state; the rolled-back row's id, reused by the next insert, must
    not carry the rolled-back text."""
    memory = make_memory()
    StoreConformance().seed(store, memory, [("a first turn", unit(1), {})])
    scope = Scope.of(memory.id)
    with pytest.raises(RuntimeError), store.write() as w:
        (phantom,) = w.insert_entries(
            [new_entry(memory, "phantom banana")], unit(0, 1)[None, :], T0
        )
        assert w.keyword_candidates(scope, "banana", EntryFilter(), 10) == []
        raise RuntimeError
    (real,) = StoreConformance().seed(store, memory, [("real apple", unit(1, 1), {})])
    assert real == phantom
    with store.read() as r:
        assert r.keyword_candidates(scope, "banana", EntryFilter(), 10) == []
        assert [i for i, _ in r.keyword_candidates(scope, "apple", EntryFilter(), 10)] == [real]
        vector = dict(r.vector_candidates(scope, unit(1, 1), EntryFilter(), 10))
    assert vector[real] == pytest.approx(1.0)


@pytest.mark.parametrize("changed", [False, True])
def test_valid_times_from_the_columns_are_the_rows(path: Path, changed: bool) -> None:
    """A search's valid times and people come from the columns: the same as SQL gives for
    three people in two memories (the unnamed group included), after corrections of valid
    times and erasures, and from a store reopened from its snapshot; an erased row, a row of
    a memory outside the scope and an id no row has give nothing."""
    store = SQLiteStore(path)
    try:
        memory_id, ids = seeded(store)
        if changed:
            change(store, ids, seed=2)
            with store.write() as w:
                w.update_entries(ids[::7], {"valid_at": hours(9)})
        asked = [*ids, max(ids) + 7]
        with store.read() as r:
            for scope in (Scope.of(memory_id), Scope(frozenset(store_memories(r)))):
                sql = r._by_id(scope, asked, "e.message_id, e.valid_at, e.memory_id, e.user_id")
                held = store.held_times(r.conn, scope, asked)
                assert held is not None
                assert sorted(held) == sorted(tuple(row) for row in sql)
                assert {u for *_, u in held} == set(USERS)
            assert store.held_times(r.conn, Scope.of(memory_id), []) == []
        store.save_indexes()
    finally:
        store.close()
    reopened = SQLiteStore(path)
    try:
        with reopened.read() as r:
            scope = Scope(frozenset(store_memories(r)))
            sql = r._by_id(scope, asked, "e.message_id, e.valid_at, e.memory_id, e.user_id")
            held = reopened.held_times(r.conn, scope, asked)
            assert held and sorted(held) == sorted(tuple(row) for row in sql)
        with reopened.write() as w:  # a write transaction reads its own rows in SQL
            assert reopened.held_times(w.conn, scope, asked) is None
    finally:
        reopened.close()


def store_memories(r: Reader) -> list[str]:
    return [row[0] for row in r.conn.execute("SELECT id FROM memories")]

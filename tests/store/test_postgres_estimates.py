"""What the table's statistics make of a filter before a keyword search's first round."""

from __future__ import annotations

import pytest

from recallery.models import Scope
from recallery.store.filters import EntryFilter, where_clause
from recallery.store.postgres import topk
from recallery.store.postgres.estimates import MAX_AIM, Column, TableStatistics, parse
from recallery.testing.conformance import T0

USERS = Column(0.0, 10.0, {f"u{i}": 0.1 for i in range(10)})  # ten users, each a tenth


def test_a_common_value_has_its_own_share_and_others_share_the_rest() -> None:
    column = Column(null_frac=0.2, n_distinct=-0.5, common={"a": 0.3, "b": 0.1})
    assert column.share("a", 1000) == pytest.approx(0.3)
    # 500 distinct values (half the rows), 2 of them common: 0.4 over the other 498
    assert column.share("z", 1000) == pytest.approx(0.4 / 498)
    every_value_common = Column(0.0, 2.0, {"a": 0.5, "b": 0.5})
    assert every_value_common.share("z", 1000) == pytest.approx(1 / 1000)  # unseen: rare
    assert Column(0.0, 0.0, {}).share("z", 1000) == 1.0  # distinct values unknown: no guess


def test_a_filter_passes_its_values_share_scaled_to_the_scope() -> None:
    one_memory = TableStatistics(rows=1000.0, columns={"user_id": USERS})
    assert one_memory.passing(EntryFilter(), 1000) == 1.0
    assert one_memory.passing(EntryFilter(user_id="u3"), 1000) == pytest.approx(0.1)
    assert one_memory.aim(EntryFilter(user_id="u3"), 1000) == pytest.approx(10.0)
    # a memory of a tenth of the table: its user's rows, if they all lie there, are all of it
    assert one_memory.passing(EntryFilter(user_id="u3"), 100) == 1.0
    # a hundredth of a much bigger table, in a memory of a thousand: a tenth of that memory
    tenants = TableStatistics(rows=1e6, columns={"user_id": Column(0.0, 10_000.0, {})})
    assert tenants.passing(EntryFilter(user_id="alice"), 1000) == pytest.approx(0.1)


def test_agents_add_up_and_columns_multiply_and_the_aim_has_a_ceiling() -> None:
    agents = Column(0.0, 4.0, {"a": 0.25, "b": 0.25, "c": 0.25, "d": 0.25})
    table = TableStatistics(rows=1000.0, columns={"user_id": USERS, "agent_id": agents})
    f = EntryFilter.retrieval(valid_on=T0, user_id="u1", agent_id="a")
    assert table.passing(f, 1000) == pytest.approx(0.1 * 0.25)
    assert table.aim(f, 1000) == MAX_AIM
    two_agents = EntryFilter(agent_ids=frozenset({"a", "b"}))
    assert table.passing(two_agents, 1000) == pytest.approx(0.5)
    assert TableStatistics().aim(f, 1000) == 1.0  # never analysed: no aim


def test_the_statistics_rows_become_tier_shares_and_columns() -> None:
    rows = [
        ("fts_len", 0.0, 50.0, ["9", "30"], [0.2, 0.3], ["0", "6", "40", "90"], 500.0),
        ("user_id", 0.0, 10.0, [f"u{i}" for i in range(10)], [0.1] * 10, None, 500.0),
    ]
    stats = parse(rows)
    assert stats.rows == 500.0
    assert stats.tier_shares is not None
    assert stats.tier_shares[topk.tier(9)] == pytest.approx(0.2)
    assert stats.columns["user_id"].share("u3", 500.0) == pytest.approx(0.1)
    never_analysed = parse([(None, None, None, None, None, None, -1.0)])
    assert never_analysed.tier_shares is None and never_analysed.columns == {}
    assert never_analysed.aim(EntryFilter(user_id="u3"), 100) == 1.0


def test_columns_checked_on_the_rows_are_compared_as_no_index_holds_them() -> None:
    f = EntryFilter(user_id="u1", session_id="s1")
    scope = Scope(frozenset({"m1"}))
    sql, params = where_clause(scope, f, heap=("memory_id", "user_id"))
    assert "(e.memory_id || '') IN (?)" in sql and "(e.user_id || '') = ?" in sql
    assert "e.session_id = ?" in sql
    assert params == where_clause(scope, f)[1]

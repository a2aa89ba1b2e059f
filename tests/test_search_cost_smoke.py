"""The mechanism-cost benchmark on a tiny store, so it cannot rot unnoticed."""

from __future__ import annotations

import pytest
from benchmarks import locomo, search_cost

from memstrata.testing import DeterministicEmbedder

pytestmark = pytest.mark.skipif(
    not locomo.DEFAULT_DATA.exists(), reason=f"LoCoMo data not found at {locomo.DEFAULT_DATA}"
)


def test_search_cost_at_300_with_fake_embedder() -> None:
    result = search_cost.run(300, queries=6, rounds=2, model=DeterministicEmbedder())
    assert result["size"] == 300 and result["rounds"] == 2
    for mode in ("store", "live"):
        rows = result[mode]
        assert set(rows) == set(search_cost.CONFIGS)
        assert rows[search_cost.BEFORE]["vs_before"] == 1.0
        for row in rows.values():
            assert len(row["p50_ms_rounds"]) == 2
            assert row["p50_ms"] > 0

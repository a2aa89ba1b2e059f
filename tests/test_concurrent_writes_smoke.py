"""The concurrent-writes benchmark on a few turns, so it cannot rot unnoticed; and every
client's turns really land (none lost, none doubled)."""

from __future__ import annotations

import pytest
from benchmarks import concurrent_writes, locomo

from memstrata.testing import DeterministicEmbedder

pytestmark = pytest.mark.skipif(
    not locomo.DEFAULT_DATA.exists(), reason=f"LoCoMo data not found at {locomo.DEFAULT_DATA}"
)


def test_concurrent_writes_with_fake_embedder() -> None:
    result = concurrent_writes.run([1, 4], turns=24, model=DeterministicEmbedder())
    assert set(result["by_clients"]) == {"1", "4"}
    for row in result["by_clients"].values():
        (run,) = row["runs"]
        assert run["turns"] == run["stored"] == 24 and run["turns_per_s"] > 0
        assert 0 < run["write_p50_ms"] <= run["write_p95_ms"]

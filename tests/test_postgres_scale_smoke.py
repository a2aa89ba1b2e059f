"""The scale-out benchmark's entry points on a tiny slice, so none can rot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from benchmarks import postgres_scale

if TYPE_CHECKING:
    from memstrata.testing.postgres import EmbeddedPostgres

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def test_tenants_and_load_on_a_tiny_slice(
    postgres_server: EmbeddedPostgres, tmp_path: Path
) -> None:
    out = tmp_path / "scale.json"
    for scenario in ("tenants", "load"):
        args = [scenario, "--sizes", "1200", "--memories", "6", "--queries", "3"]
        assert postgres_scale.main([*args, "--dsn", postgres_server.dsn, "--out", str(out)]) == 0
    results = json.loads(out.read_text())
    tenants = results["tenants"]["1200"]
    for store in ("postgres", "sqlite"):
        assert tenants[store]["identical_results"] == {"keyword": 1.0, "vector": 1.0, "search": 1.0}
    assert tenants["postgres"]["clustered"]["keyword"]["ratio_p50"] > 0
    assert results["load"]["1200"]["writer_no_hnsw_entries_per_s"] > 0

"""The scale-out benchmark's entry points on a tiny slice, so none can rot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from benchmarks.scale import postgres_scale

if TYPE_CHECKING:
    from recallery.testing.postgres import EmbeddedPostgres

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


@pytest.mark.model
def test_big_on_a_tiny_slice(postgres_server: EmbeddedPostgres, tmp_path: Path) -> None:
    out = tmp_path / "big.json"
    # PostgreSQL only: the SQLite store builds no HNSW index below ann_threshold, and the
    # benchmark waits for one
    args = ["big", "--sizes", "1500", "--queries", "4", "--stores", "postgres"]
    assert postgres_scale.main([*args, "--dsn", postgres_server.dsn, "--out", str(out)]) == 0
    big = json.loads(out.read_text())["big"]["1500"]
    timings = big["postgres"]
    for leg in ("keyword", "keyword_one_user_in_ten", "keyword_warm", "hybrid"):
        assert 0 < timings[leg]["p50_ms"] <= timings[leg]["p95_ms"], leg
    assert timings["hybrid"]["first_pass_p50_ms"] > 0
    assert timings["agreement_with_fts5"] > 0.9 and timings["exact_vs_every_match"] == 1.0

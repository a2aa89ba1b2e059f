"""benchmarks/scale/ann.py on a tiny slice of random vectors, so it cannot rot unnoticed."""

from __future__ import annotations

from benchmarks.scale import ann


def test_the_ann_benchmark_runs_on_a_tiny_slice() -> None:
    report = ann.run([1500], queries=5, limit=10, noise=0.5, extra=100, source="random")
    row = report["sizes"]["1500"]
    assert row["n"] == 1500 and row["recall_at_10"] >= 0.9
    assert row["ann_p50_ms"] > 0 and row["exact_p50_ms"] > 0
    assert "| 1,500 |" in ann.table(report)

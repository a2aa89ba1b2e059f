"""The soak script on a tiny run, against a server it starts and against one given by URL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from benchmarks.live_server import LiveServer, client, data
from benchmarks.quality import locomo
from benchmarks.speed import soak

pytestmark = [
    pytest.mark.slow,
    pytest.mark.model,
    pytest.mark.skipif(
        not locomo.DEFAULT_DATA.exists(), reason=f"LoCoMo data not found at {locomo.DEFAULT_DATA}"
    ),
]

TINY = ["--seconds", "2", "--prefill", "20", "--writers", "1", "--searchers", "1"]


def run(tmp_path: Path, *extra: str) -> dict[str, Any]:
    out = tmp_path / "soak.json"
    assert soak.main([*TINY, *extra, "--out", str(out)]) == 0
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def assert_loaded(result: dict[str, Any]) -> None:
    """Both routes answered every request, with ordered percentiles, and every write landed."""
    assert result["config"]["prefill"] == 20 and result["prefill"]["turns"] == 20
    load = result["load"]
    assert set(load["routes"]) == {soak.WRITE, soak.SEARCH}
    for route in load["routes"].values():
        assert route["ok"] == route["requests"] > 0 and route["errors"] == {}
        assert 0 < route["p50_ms"] <= route["p95_ms"] <= route["p99_ms"]
    assert load["errors"] == 0
    assert load["requests"] == sum(r["requests"] for r in load["routes"].values())
    assert load["search_hits_mean"] > 0
    writes = load["routes"][soak.WRITE]["ok"]
    assert result["memory"]["entry_count"] == 20 + writes and result["memory"]["evicted"] == 0


def test_soak_on_its_own_server(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = run(tmp_path)
    assert_loaded(result)
    assert result["server"] == soak.OWN
    rss = result["rss_mb"]
    assert set(rss) == {"started", "prefilled", "end"} and all(v > 0 for v in rss.values())
    series = result["rss_series_mb"]
    assert len(series) >= 2 and all(mb > 0 for _, mb in series)
    assert [t for t, _ in series] == sorted(t for t, _ in series) and series[-1][0] <= 3.0
    growth = result["rss_growth"]
    assert growth["end_mb"] == rss["end"] and growth["after_warm_up_mb"] in [mb for _, mb in series]
    assert growth["ratio"] == round(rss["end"] / growth["after_warm_up_mb"], 3)
    assert result["load"]["server_cpu_s"] > 0 and result["load"]["client_cpu_s"] > 0
    assert f"| {soak.SEARCH} | {result['load']['routes'][soak.SEARCH]['requests']} |" in (
        capsys.readouterr().out
    )


def test_soak_against_a_running_server(tmp_path: Path) -> None:
    with LiveServer(tmp_path / "data", "rc-soak-smoke-key") as live:
        result = run(tmp_path, "--url", live.url, "--api-key", live.api_key)
        assert_loaded(result)
        assert result["server"] == live.url and "rss_mb" not in result
        assert "server_cpu_s" not in result["load"]
        with client(live.url, live.api_key) as http:
            listed = data(http.get("/memories"))
    assert listed["total_count"] == 0, "the soak's memory was not deleted"

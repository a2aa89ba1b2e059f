"""The web pages benchmark on a small memory, so it cannot rot unnoticed (the figure the
README quotes comes from the full run: ``python -m benchmarks.speed.web_messages``)."""

from __future__ import annotations

from pathlib import Path

from benchmarks.speed import web_messages


def test_the_benchmark_fills_a_memory_and_times_each_page(tmp_path: Path) -> None:
    timings = web_messages.run(entries=600, repeat=3, data_dir=tmp_path)
    assert [t.name for t in timings] == [
        "first page (50 rows)",
        "page 3",
        "filtered by user",
        "facts, first page",
        "facts, user and trust",
        "facts, text",
        "facts, common text",
        "person page (a user)",
        "people, users",
        "people, sessions",
    ]
    assert [t.rows for t in timings][:5] == [50, 50, 50, 50, 50]
    assert timings[5].rows == 11  # "fact 12", "fact 120".."fact 129"
    assert timings[6].rows == 50 and timings[7].rows > 0
    assert timings[8].rows == 4 and timings[9].rows == 15  # 300 turns, 20 to a session
    # Timings only: the budget is the benchmark's to judge, never a test's (shared machines).
    assert all(0 < t.p50_ms <= t.p95_ms for t in timings)
    assert "budget 300 ms" in timings[0].line()

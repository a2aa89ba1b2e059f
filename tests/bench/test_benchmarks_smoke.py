"""Every benchmark entry point on a tiny slice, so none of them can rot unnoticed.

The LoCoMo data is read from ../shared (as the benchmarks do); recallery runs on the
deterministic test embedder instead of the real model. The peer drivers live in their own venv:
here only their CLIs, their pins and the speed runner with the numpy-only `exact-cosine` driver
are exercised.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from benchmarks import report, support
from benchmarks.peers import run_speed, speed_worker, worker
from benchmarks.quality import locomo, recallery_locomo
from benchmarks.speed import concurrent_writes, restart, search_cost, search_revisions, speed
from numpy.typing import NDArray

from recallery import Fusion
from recallery.testing import DeterministicEmbedder

pytestmark = pytest.mark.skipif(
    not locomo.DEFAULT_DATA.exists(), reason=f"LoCoMo data not found at {locomo.DEFAULT_DATA}"
)

PEERS_DIR = support.REPO / "benchmarks" / "peers"


def fake_embedder() -> DeterministicEmbedder:
    return DeterministicEmbedder(dimension=384)


@pytest.fixture(scope="module")
def conversation() -> locomo.Conversation:
    """Conversation 1 with its first 30 questions."""
    conv = locomo.select(locomo.load_conversations(), "1")[0]
    return dataclasses.replace(conv, questions=conv.questions[:30])


def recalls(result: Mapping[str, Any]) -> Iterator[float]:
    """Every recall figure of an `evaluate` result (None where a category has no question)."""
    yield from result["overall"]["recall"].values()
    for cat in result["overall"]["by_category"].values():
        yield from (v for v in cat["recall"].values() if v is not None)


def assert_recalls(result: Mapping[str, Any]) -> None:
    values = list(recalls(result))
    assert values
    assert all(isinstance(v, float | int) and 0 <= v <= 100 for v in values), values


def test_locomo_bm25_on_conversation_one(tmp_path: Path) -> None:
    out = tmp_path / "bm25.json"
    assert locomo.main(["--convs", "1", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["ks"] == list(locomo.KS) == [5, 10, 25, 50]
    assert set(result["overall"]["recall"]) == {"5", "10", "25", "50"}
    assert result["conversations"] == ["conv-26"]
    assert_recalls(result)
    r = result["overall"]["recall"]
    assert r["5"] <= r["10"] <= r["25"] <= r["50"]


def test_recallery_locomo_with_fake_embedder(conversation: locomo.Conversation) -> None:
    ours = recallery_locomo.run(
        [conversation],
        cache=False,
        embedder=fake_embedder(),
        keywords_similarity_weight=0.5,
        fusion=Fusion("weighted"),
    )
    results = {"BM25 baseline": locomo.evaluate(locomo.BM25Retriever(), [conversation])}
    results["recallery"] = ours
    assert_recalls(ours)
    assert ours["overall"]["n"] == len(conversation.questions)
    assert re.search(r"^\| recallery \|", locomo.markdown_table(results), re.M)


def test_speed_at_300_with_fake_embedder() -> None:
    result = speed.run([300], queries=8, writes=8, embedder=fake_embedder(), late=4)
    assert result["model"] == "deterministic"
    assert result["ingest_single"]["n"] == 8
    assert result["ingest_batched"]["n"] == 16
    row = result["sizes"]["300"]
    assert row["entries"] >= 300
    for kind in ("search_live", "search_store"):
        assert row[kind]["n"] == 8
        assert 0 < row[kind]["p50_ms"] <= row[kind]["p95_ms"]
    assert row["fill"]["turns_per_s"] > 0
    assert row["rss_mb"] > 0


def test_restart_at_300_with_fake_embedder(tmp_path: Path) -> None:
    result = restart.run(tmp_path / "store", 300, runs=2, rebuild=True, model=fake_embedder())
    assert result["entries"] == 300 and result["queries"] == 25
    for run in result["runs"]:
        assert run["first_search_s"] > 0 and run["peak_rss_mb"] > 0
        assert run["cold_vs_warm_differ"] == run["cold_vs_first_process_warm_differ"] == []


def test_search_cost_at_300_with_fake_embedder() -> None:
    result = search_cost.run(300, queries=6, rounds=2, model=fake_embedder())
    assert result["size"] == 300 and result["rounds"] == 2
    for mode in ("store", "live"):
        rows = result[mode]
        assert set(rows) == set(search_cost.CONFIGS)
        assert rows[search_cost.BEFORE]["vs_before"] == 1.0
        for row in rows.values():
            assert len(row["p50_ms_rounds"]) == 2
            assert row["p50_ms"] > 0


@pytest.mark.skipif(not (support.REPO / ".git").exists(), reason="not a git checkout")
def test_search_revisions_times_both_trees_and_removes_the_worktree() -> None:
    before = subprocess.run(
        ["git", "-C", str(support.REPO), "worktree", "list"], capture_output=True, text=True
    ).stdout
    result = search_revisions.run("HEAD", 300, queries=6, rounds=2, repeats=1, fake=True)
    assert result["against"] == "HEAD" and result["size"] == 300
    expected = {f"{m} {w}" for m in search_revisions.MODES for w in search_revisions.WEIGHTS}
    assert set(result["settings"]) == expected
    for row in result["settings"].values():
        assert len(row["this_p50_ms_rounds"]) == len(row["against_p50_ms_rounds"]) == 2
        assert row["this_p50_ms"] > 0 and row["against_p50_ms"] > 0
        assert row["ratio"] == round(row["this_p50_ms"] / row["against_p50_ms"], 3)
    after = subprocess.run(
        ["git", "-C", str(support.REPO), "worktree", "list"], capture_output=True, text=True
    ).stdout
    assert after == before


def test_concurrent_writes_store_every_turn_acknowledged() -> None:
    result = concurrent_writes.run([1, 4], turns=24, model=fake_embedder())
    assert set(result["by_clients"]) == {"1", "4"}
    for row in result["by_clients"].values():
        (run,) = row["runs"]
        assert run["turns"] == run["stored"] == 24 and run["turns_per_s"] > 0
        assert 0 < run["write_p50_ms"] <= run["write_p95_ms"]


# --- report --------------------------------------------------------------------------------------


def _speed_sizes(p50: float) -> dict[str, Any]:
    def entry(scale: float) -> dict[str, Any]:
        search = {"p50_ms": p50 * scale, "p95_ms": 2 * p50 * scale}
        return {
            "fill": {"n": 1000, "seconds": 0.5},
            "search_live": {"n": 5, **search},
            "search_store": {"n": 5, **search},
            "rss_mb": 100.0 * scale,
        }

    return {"1000": entry(1.0), "10000": entry(3.0)}


def _fake_results(folder: Path, conversation: locomo.Conversation) -> None:
    bm25 = locomo.evaluate(locomo.BM25Retriever(), [conversation])
    files: dict[str, Any] = {
        "locomo-recallery.json": {"BM25 baseline": bm25, "recallery": bm25},
        "locomo-mem0-faiss-cached.json": {"system": "mem0-faiss", **bm25},
        "locomo-peers-cached.json": {"table": "", "results": {}},
        "speed.json": {"ingest_single": {"turns_per_s": 50.0}, "sizes": _speed_sizes(2.0)},
    }
    common = {"peer": "mem0-faiss", "status": "ok", "ingest_live": {"turns_per_s": 20.0}}
    peer = [{**common, "size": int(s), **e} for s, e in _speed_sizes(5.0).items()]
    peer[-1] |= {"status": "timed out", "search_store": {"n": 2, "p50_ms": None}}
    files["speed-peers.json"] = {"meta": {}, "records": peer}
    for name, payload in files.items():
        (folder / name).write_text(json.dumps(payload))


def test_report_from_fake_results(
    tmp_path: Path, conversation: locomo.Conversation, capsys: pytest.CaptureFixture[str]
) -> None:
    _fake_results(tmp_path, conversation)
    assert report.main(["--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for row in ("recallery", "BM25 (k1 1.2, b 0.75)", "DRAGON (paper, Table 3)", "mem0-faiss"):
        assert re.search(rf"^\| {re.escape(row)} \|", out, re.M), row
    assert "| system | ingest turns/s" in out
    assert "| 5.00 / 10.0 (×2.5 / ×2.5) |" in out  # 1k p50 / p95 of the peer, ratios to recallery
    assert "| 20.0 (×2.5) |" in out  # ingest turns/s: recallery's 50 over the peer's 20
    assert "timed out" in out
    assert (tmp_path / "report.md").read_text() in out + "\n"
    pytest.importorskip("matplotlib")
    assert (tmp_path / "latency.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_report_says_what_is_missing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert report.main(["--results", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    for name in ("locomo-recallery.json", "speed.json", "speed-peers.json"):
        assert f"missing: {name}" in captured.err
    assert "(no speed results)" in captured.out
    assert not (tmp_path / "latency.png").exists()


# --- peers ---------------------------------------------------------------------------------------


def test_peer_requirements_are_exact_pins() -> None:
    lines = (PEERS_DIR / "requirements.txt").read_text().splitlines()
    pins = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    assert pins
    for pin in pins:
        assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*==[0-9][A-Za-z0-9_.+-]*", pin), pin
    names = {p.split("==")[0] for p in pins}
    assert {"mem0ai", "langgraph", "chromadb"} <= names


@pytest.mark.parametrize("parse", [worker.parse_args, speed_worker.parse_args])
def test_peer_worker_clis_answer_help(parse: Any, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        parse(["--help"])
    assert exit_.value.code == 0
    assert "usage:" in capsys.readouterr().out


def test_peers_speed_runner_with_exact_cosine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner, its worker process and the JSON, on the numpy-only reference driver."""
    monkeypatch.setenv("PEERS_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "results" / "speed-peers.json"
    argv = ["--peers", "exact-cosine", "--sizes", "200,400", "--embedder", "hash"]
    argv += ["--queries", "5", "--writes", "5", "--late-writes", "2", "--batch", "100"]
    argv += ["--settle", "0", "--python", sys.executable, "--out", str(out)]
    assert run_speed.main(argv) == 0
    data = json.loads(out.read_text())
    assert data["meta"]["uptime_start"] and data["meta"]["loadavg_end"]
    rows = data["records"]
    assert [(r["peer"], r["size"], r["status"]) for r in rows] == [
        ("exact-cosine", 200, "ok"),
        ("exact-cosine", 400, "ok"),
    ]
    for row in rows:
        assert row["entries"] >= row["size"]
        assert row["ingest_live"]["n"] == 5
        assert row["search_store"]["n"] == 5 and row["search_store"]["mean_hits"] == 10
        assert math.isfinite(row["search_live"]["p50_ms"])


def test_rest_benchmark_writes_and_searches_through_http(
    conversation: locomo.Conversation,
) -> None:
    from benchmarks.quality import rest_locomo

    short = dataclasses.replace(
        conversation,
        sessions=conversation.sessions[:2],
        questions=conversation.questions[:10],
    )
    result = rest_locomo.run([short], embedder=fake_embedder(), madial=False, writers=1)
    assert set(result["recall"]) == {"recallery", "BM25", "dense MiniLM", "naive min-max hybrid"}
    assert result["recall"]["recallery"]["LoCoMo 1-5"]["n"] == 10
    assert result["cost"]["turns_written"] == sum(len(s.turns) for s in short.sessions)
    assert "| recallery |" in rest_locomo.table(result)


def test_rest_benchmark_with_the_e5_model_sends_its_id_and_query_form(
    conversation: locomo.Conversation,
) -> None:
    """``--model e5``: memories are created with e5's id, so the server embeds with the e5
    factory; questions are embedded in the query form, and the dense row is named for it."""
    from benchmarks.quality import rest_locomo

    class QueryForm(DeterministicEmbedder):
        queries = 0

        def embed_query(self, texts: Sequence[str]) -> NDArray[np.float32]:
            self.queries += len(texts)
            return self.embed(texts)

    model = QueryForm(model_id="multilingual-e5-small")
    short = dataclasses.replace(
        conversation, sessions=conversation.sessions[:1], questions=conversation.questions[:4]
    )
    result = rest_locomo.run(
        [short], embedder=model, madial=False, writers=1, embd_id=rest_locomo.E5_EMBD_ID
    )
    assert result["setup"]["embd_id"] == "multilingual-e5-small@Builtin"
    assert "dense multilingual-e5-small" in result["recall"]
    assert "dense MiniLM" not in result["recall"]
    assert model.queries == 2 * 4  # the server's searches and the baselines' query vectors


@pytest.mark.postgres
def test_rest_benchmark_runs_on_postgres(
    conversation: locomo.Conversation, postgres_dsn: str
) -> None:
    """``--postgres``: the same REST run on a PostgreSQL store writes every turn and finds
    turns the questions ask about."""
    from benchmarks.quality import rest_locomo

    from recallery.settings import Settings
    from recallery.testing.postgres import truncate_all

    short = dataclasses.replace(
        conversation,
        sessions=conversation.sessions[:2],
        questions=conversation.questions[:10],
    )
    truncate_all(postgres_dsn)
    on_pg = rest_locomo.run(
        [short],
        embedder=fake_embedder(),
        madial=False,
        writers=1,
        settings=Settings(database_url=postgres_dsn),
    )
    on_sqlite = rest_locomo.run([short], embedder=fake_embedder(), madial=False, writers=1)
    assert on_pg["cost"]["turns_written"] == on_sqlite["cost"]["turns_written"]
    found = on_pg["recall"]["recallery"]["LoCoMo 1-5"]
    assert found["n"] == 10 and found["R@10"] > 0


def test_chat_recall_is_also_counted_once_per_turn(conversation: locomo.Conversation) -> None:
    """In chat the pieces of a turn share its label: the second count keeps each label's
    first place only, so it can only find more, and whole-turn runs do not report it."""
    from benchmarks.quality import rest_locomo

    assert rest_locomo.each_turn_once(["D1:3", "D1:4", "D1:3", "D2:1", "D1:4"]) == [
        "D1:3",
        "D1:4",
        "D2:1",
    ]
    short = dataclasses.replace(
        conversation, sessions=conversation.sessions[:2], questions=conversation.questions[:10]
    )
    chat = rest_locomo.run([short], embedder=fake_embedder(), madial=False, writers=1, chat=True)
    once = chat["recall_each_turn_once"]
    assert set(once) == set(chat["recall"])
    for system, splits in chat["recall"].items():
        assert once[system]["LoCoMo 1-5"]["n"] == 10
        assert once[system]["LoCoMo 1-5"]["R@10"] >= splits["LoCoMo 1-5"]["R@10"]
    assert "| recallery |" in rest_locomo.table(chat, "recall_each_turn_once")
    whole = rest_locomo.run([short], embedder=fake_embedder(), madial=False, writers=1)
    assert "recall_each_turn_once" not in whole


def test_chat_mode_sends_each_sentence_of_a_turn_as_a_message() -> None:
    from benchmarks.quality import rest_locomo

    day = datetime(2023, 5, 8, tzinfo=UTC)
    reply = locomo.Turn("D1:3", "Mel", "Yes! Last July.  Why do you ask?", "a lake", 1, 3, day)
    plain = locomo.Turn("D1:4", "Ann", "Just wondering", None, 1, 4, day)
    conv = locomo.Conversation(
        "c", 1, ("Mel", "Ann"), (locomo.Session(1, day, (reply, plain)),), ()
    )
    turns = rest_locomo.locomo_turns(conv, chat=True)
    assert [t.text for t in turns] == [
        'Mel said, "Yes!"',
        'Mel said, "Last July."',
        'Mel said, "Why do you ask?" and shared a lake',
        'Ann said, "Just wondering"',
    ]
    assert [t.label for t in turns] == ["D1:3", "D1:3", "D1:3", "D1:4"]
    assert {t.session for t in turns} == {"c/s1"}
    assert [t.text for t in rest_locomo.locomo_turns(conv)] == [
        'Mel said, "Yes! Last July.  Why do you ask?" and shared a lake',
        'Ann said, "Just wondering"',
    ]


def test_madial_pools_and_queries() -> None:
    from benchmarks.quality import rest_locomo

    if not rest_locomo.MADIAL.exists():
        pytest.skip("MADial-Bench not found")
    pools, queries = rest_locomo.madial_data()
    assert sorted(len(t) for t in pools.values()) == [76, 84]
    assert len(queries) == 160
    assert all(q.strip() and gold for _, q, gold in queries)


def test_scifact_is_beirs_test_split_and_scores_by_its_measures() -> None:
    from benchmarks.quality import rest_scifact

    if not rest_scifact.SCIFACT.exists():
        pytest.skip("SciFact not found")
    corpus, queries = rest_scifact.load()
    assert (len(corpus), len(queries), sum(len(g) for _, g in queries)) == (5183, 300, 339)
    assert all(g in corpus for _, gold in queries for g in gold)
    assert not any("['" in text or "'\n" in text for text in corpus.values())
    assert rest_scifact.ndcg_at(["a"], ["a", "b"], 10) == 1.0
    assert rest_scifact.ndcg_at(["a", "b"], ["x", "a"], 10) == pytest.approx(
        (1 / math.log2(3)) / (1 + 1 / math.log2(3))
    )
    assert rest_scifact.ndcg_at(["a"], ["x"] * 10 + ["a"], 10) == 0.0


def test_scifact_benchmark_searches_every_memory_it_wrote() -> None:
    from benchmarks.quality import rest_scifact

    if not rest_scifact.SCIFACT.exists():
        pytest.skip("SciFact not found")
    corpus, queries = rest_scifact.load()
    asked = queries[:8]
    wanted = {g for _, gold in asked for g in gold}
    others = [d for d in sorted(corpus) if d not in wanted][:12]
    small = {d: corpus[d] for d in [*wanted, *others]}
    result = rest_scifact.run(fake_embedder(), (small, asked), writers=2, per_memory=5)
    assert result["cost"]["memories"] == math.ceil(len(small) / 5)
    assert result["cost"]["docs_written"] == len(small)
    # a claim's own abstract shares its rarest words: found though spread over the memories
    assert result["scores"]["recallery"]["R@50"] == 100.0
    assert result["scores"]["BM25"]["nDCG@10"] > 0
    assert "| recallery |" in rest_scifact.table(result)

"""Restart: how long a fresh process takes to answer its first search on a big SQLite store, how
much memory it peaks at, and whether that first answer is the one a warm process gives.

A store of ``--size`` LoCoMo turns (one memory, four users, the local model's cached vectors,
filled as :mod:`benchmarks.speed.speed` fills its stores) is built once and kept under
``--dir``. Each run then starts a fresh child process that opens the store through the engine
and searches:

- ``first_search_s``: from the child's start (interpreter and imports included) until its first
  search is answered (``first_search_cpu_s``: the CPU seconds it used by then, a figure the
  machine's other load hardly moves); ``open_s`` and ``first_answer_s`` split that into
  opening the store and the search itself (which catches the in-process indexes up).
- ``hnsw_ready_s``: from the child's start until the memory's approximate index covers every
  row (searches meanwhile are exact over the rows it does not cover).
- ``peak_rss_mb`` (at the first answer and overall): the child's ``ru_maxrss``.
- ``cold_vs_warm_differ``: the queries (keyword only, vector only and hybrid, each with a user
  filter) whose answers right after the first search differ (ids, order or scores) from the
  same process's once it is warm (HNSW built); ``cold_vs_first_process_warm_differ``: from
  the first process's warm answers.

Processes run one after another (``--runs``, default 2): the first finds the file as the last
one left it (with ``--rebuild``: without index snapshots, so it loads every row and builds the
HNSW index) and, closing, snapshots its indexes into the file; the second restarts from there.

Query vectors are precomputed (store and engine time only, no model load). Usage::

    python -m benchmarks.speed.restart --size 1000000 --out benchmarks/results/restart.json
"""

from __future__ import annotations

import argparse
import json
import resource
import sqlite3
import subprocess
import sys
import time
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks.support import REPO, load_average, peak_rss_mb, write_json
from recallery import Engine, SearchRequest
from recallery.providers.base import Embedder
from recallery.providers.registry import ModelRegistry
from recallery.settings import Settings
from recallery.store.sqlite import SQLiteStore

QUERIES = 8
#: keywords_similarity_weight of each mode: keyword only, vector only, hybrid.
MODES = {"keyword": 1.0, "vector": 0.0, "hybrid": 0.4}
DB = "speed.db"


class Lookup:
    """An embedder that knows only the benchmark's query vectors."""

    model_id = "all-MiniLM-L6-v2"
    dimension = 384

    def __init__(self, vectors: dict[str, NDArray[np.float32]]) -> None:
        self.known = vectors

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        return np.stack([self.known[t] for t in texts])


def build(folder: Path, size: int, model: Embedder | None = None) -> dict[str, Any]:
    """The store of ``size`` entries in ``folder`` (built unless ``built.json`` says it is),
    with the local model's cached LoCoMo vectors (``model``: another embedder's, uncached)."""
    marker = folder / "built.json"
    if marker.exists():
        return dict(json.loads(marker.read_text()))
    from benchmarks.speed.speed import Bench, TimedEmbedder, corpus, corpus_vectors

    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob(DB + "*"):
        stale.unlink()
    texts, questions = corpus()
    if model is None:
        from recallery.providers.local import LocalEmbedder

        embedder = TimedEmbedder(LocalEmbedder())
    else:
        embedder = TimedEmbedder(model)
    vectors = corpus_vectors(embedder.inner, texts, questions, cache=model is None)
    bench = Bench(folder, embedder)
    t0 = time.perf_counter()
    bench.fill_to(size, texts, vectors)
    fill_s = time.perf_counter() - t0
    info = {"user_id": bench.actor.user_id, "memory_id": bench.memory.id, "size": bench.count}
    bench.close()
    chosen = questions[: 4 * QUERIES : 4]
    np.save(folder / "queries.npy", np.stack([vectors[q] for q in chosen]))
    info |= {"queries": chosen, "fill_s": round(fill_s, 1)}
    marker.write_text(json.dumps(info, indent=1))
    return info


def requests(info: dict[str, Any]) -> list[tuple[str, SearchRequest]]:
    return [
        (f"{mode}:{n}", SearchRequest(q, (info["memory_id"],), top_n=10, similarity_threshold=0.0,
                                      keywords_similarity_weight=w, user_id=f"user-{n % 4}"))
        for n, q in enumerate(info["queries"])
        for mode, w in MODES.items()
    ]  # fmt: skip


def answer(engine: Engine, user_id: str, request: SearchRequest) -> list[list[Any]]:
    hits = engine.search(engine.principal(user_id), request)
    return [[h.entry.message_id, h.score, h.keyword_score, h.vector_score] for h in hits]


def answers(engine: Engine, info: dict[str, Any]) -> dict[str, list[list[Any]]]:
    return {key: answer(engine, info["user_id"], r) for key, r in requests(info)}


def cpu_s() -> float:
    """CPU seconds this process used (user and system; its threads together): unlike wall
    time, hardly moved by what else runs on the machine."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return round(usage.ru_utime + usage.ru_stime, 2)


def child(folder: Path, started: float) -> dict[str, Any]:
    """One fresh process's restart (run with ``--child``); times are seconds since the
    parent started it (``--started``, wall clock)."""
    info = json.loads((folder / "built.json").read_text())
    vectors = dict(zip(info["queries"], np.load(folder / "queries.npy"), strict=True))
    imports_s = time.time() - started
    threshold = Settings.from_env().ann_threshold
    store = SQLiteStore(folder / DB, ann_threshold=threshold)
    engine = Engine(store, models=ModelRegistry(builtin=lambda: Lookup(vectors)))
    open_s = time.time() - started
    first_key, first_request = requests(info)[0]
    first = answer(engine, info["user_id"], first_request)
    first_s = time.time() - started
    out: dict[str, Any] = {
        "imports_s": round(imports_s, 2),
        "open_s": round(open_s - imports_s, 2),
        "first_answer_s": round(first_s - open_s, 2),
        "first_search_s": round(first_s, 2),
        "first_search_cpu_s": cpu_s(),
        "peak_rss_first_mb": peak_rss_mb(),
    }
    out["cold"] = answers(engine, info) | {"first " + first_key: first}
    out["cold_done_s"] = round(time.time() - started, 2)
    if 0 < threshold <= info["size"]:
        while (store.vectors_indexed(info["memory_id"]) or 0) < info["size"]:
            time.sleep(0.2)
        out["hnsw_ready_s"] = round(time.time() - started, 2)
    out["warm"] = answers(engine, info)
    out["peak_rss_mb"] = peak_rss_mb()
    out["rss_now_mb"] = round(int(_status("VmRSS")) / 1024, 1)
    t0 = time.time()
    engine.close()  # snapshots the indexes where that is due
    out["close_s"] = round(time.time() - t0, 2)
    out["peak_rss_with_close_mb"] = peak_rss_mb()
    return out


def _status(field: str) -> str:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return line.split()[1]
    return "0"


def drop_snapshots(folder: Path) -> dict[str, float]:
    """Delete the stored snapshots as an erasure's trigger does (secure_delete on), timed."""
    with closing(sqlite3.connect(folder / DB)) as conn:
        conn.execute("PRAGMA secure_delete = ON")
        held = "SELECT sum(length(data)) FROM index_snapshots"
        if not conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name = 'index_snapshots'"
        ).fetchone():
            return {}
        size = conn.execute(held).fetchone()[0] or 0
        t0 = time.perf_counter()
        conn.execute("DELETE FROM index_snapshots")
        conn.commit()
        t1 = time.perf_counter()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        t2 = time.perf_counter()
    return {
        "mb": round(size / 2**20, 1),
        "delete_s": round(t1 - t0, 2),
        "scrub_s": round(t2 - t1, 2),
    }


def run_child(folder: Path) -> dict[str, Any]:
    command = [sys.executable, "-m", "benchmarks.speed.restart", "--child", "--dir", str(folder)]
    command += ["--started", repr(time.time())]
    t0 = time.perf_counter()
    done = subprocess.run(command, check=True, capture_output=True, text=True, cwd=REPO)
    result: dict[str, Any] = json.loads(done.stdout)
    result["wall_s"] = round(time.perf_counter() - t0, 2)
    return result


def differences(a: dict[str, list[list[Any]]], b: dict[str, list[list[Any]]]) -> list[str]:
    """Keys whose answers differ (the first search is compared with its query's answer)."""
    return sorted(k for k in a if a[k] != b.get(k, b.get(k.removeprefix("first "))))


def run(
    folder: Path, size: int, runs: int, rebuild: bool, model: Embedder | None = None
) -> dict[str, Any]:
    """The whole benchmark: build (once), then ``runs`` fresh processes one after another."""
    info = build(folder, size, model)
    dropped = drop_snapshots(folder) if rebuild else {}
    done = [run_child(folder) for _ in range(runs)]
    report: dict[str, Any] = {
        "entries": info["size"],
        "snapshots_dropped": dropped,
        "queries": len(done[0]["cold"]),
        "loadavg": load_average(),
        "db_mb": round(sum(p.stat().st_size for p in folder.glob(DB + "*")) / 2**20, 1),
        "runs": [
            {k: v for k, v in r.items() if k not in ("cold", "warm")}
            | {
                "cold_vs_warm_differ": differences(r["cold"], r["warm"]),
                "cold_vs_first_process_warm_differ": differences(r["cold"], done[0]["warm"]),
            }
            for r in done
        ],
    }
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--dir", type=Path)
    parser.add_argument("--runs", type=int, default=2, help="fresh processes, one after another")
    parser.add_argument(
        "--rebuild", action="store_true", help="drop the stored snapshots first (a cold rebuild)"
    )
    parser.add_argument("--label", default="after")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--started", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    folder = args.dir or Path(f"/tmp/recallery-restart-{args.size}")
    if args.child:
        started = args.started or time.time()
        print(json.dumps(child(folder, started)))
        return 0
    report = run(folder, args.size, args.runs, args.rebuild)
    print(json.dumps(report, indent=1), file=sys.stderr)
    if args.out:
        previous = json.loads(args.out.read_text()) if args.out.exists() else {}
        write_json(args.out, previous | {args.label: report})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Approximate (usearch HNSW) against exact search in the SQLite store's vector cache.

Rows are the local model's LoCoMo turn vectors (the peers' cache in benchmarks/.cache, embedded
once if missing), each copied with Gaussian noise of relative norm ``--noise`` and renormalised,
so N rows are distinct and keep the corpus' clusters; queries are LoCoMo questions.
``--source random`` uses seeded clustered random vectors instead (no model: smoke tests).

Per size: the bulk build of the index (every core), p50/p95 of ``VectorCache.search`` at
``--limit`` 50 (the engine's pool for top_n 10; the index is asked for k = 200 candidates)
with a filter that lets everything pass, exact and approximate; recall@10 and @50 of the
approximate results against the exact ones; the cost per row of extending a built index; the
index's memory (usearch's count, and the RSS it added) and the process RSS, which also holds the
benchmark's source rows and the cache's float32 copy.
No SQL runs here: this is the vector part of a store-only search.

Usage::

    python -m benchmarks.scale.ann --sizes 100000,1000000
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks.quality.locomo import load_conversations, turn_text
from benchmarks.support import load_average, quantile_ms, rss_mb, write_json
from recallery.store.sqlite.ranking import best_passing
from recallery.store.sqlite.vectors import Hits, VectorCache

MEMORY = "bench"
BATCH = 100_000


def locomo_vectors() -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """(turn vectors, question vectors) of the local model, from the peers' cache."""
    from benchmarks.peers.embedding import cached_vectors, locomo_texts, make_embedder

    conversations = load_conversations()
    vectors = cached_vectors(make_embedder("local"), locomo_texts(conversations))
    turns = dict.fromkeys(turn_text(t) for c in conversations for t in c.turns)
    questions = dict.fromkeys(q.question for c in conversations for q in c.questions)
    return np.stack([vectors[t] for t in turns]), np.stack([vectors[q] for q in questions])


def random_vectors(seed: int = 0) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """Seeded clustered unit vectors in 384 dimensions: 2000 'turns', 300 'questions'."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(100, 384))
    points = centres[rng.integers(0, 100, 2300)] + rng.normal(scale=0.6, size=(2300, 384))
    points = (points / np.linalg.norm(points, axis=1, keepdims=True)).astype(np.float32)
    return points[:2000], points[2000:]


def noisy_rows(
    base: NDArray[np.float32], n: int, noise: float, seed: int = 0
) -> NDArray[np.float32]:
    """``n`` unit rows: base rows cycled, each plus noise of relative norm ``noise``."""
    rng = np.random.default_rng(seed)
    out = np.empty((n, base.shape[1]), np.float32)
    for start in range(0, n, BATCH):
        end = min(n, start + BATCH)
        part = base[np.arange(start, end) % len(base)]
        part = part + rng.standard_normal(part.shape, np.float32) * (noise / base.shape[1] ** 0.5)
        out[start:end] = part / np.linalg.norm(part, axis=1, keepdims=True)
    return out


def fill(cache: VectorCache, rows: NDArray[np.float32], first: int = 0) -> None:
    """Hand ``rows`` to the cache as the store would, a batch per sync; ids are 1-based."""
    for start in range(0, len(rows), BATCH):
        part = rows[start : start + BATCH]
        batch = [(first + start + i + 1, MEMORY, v.tobytes()) for i, v in enumerate(part)]
        cache.sync(lambda high, b=batch: [r for r in b if r[0] > high])  # type: ignore[misc]


def timed_searches(
    cache: VectorCache, queries: NDArray[np.float32], limit: int
) -> tuple[list[list[int]], list[float]]:
    def everything_passes(ids: NDArray[np.int64], sims: NDArray[np.float32]) -> Hits:
        return best_passing(ids, sims, limit, set)

    for q in queries[:5]:  # warm up caches and BLAS threads
        cache.search([MEMORY], q, limit, everything_passes)
    found, took = [], []
    for q in queries:
        t0 = time.perf_counter()
        hits = cache.search([MEMORY], q, limit, everything_passes)
        took.append(time.perf_counter() - t0)
        found.append([i for i, _ in hits])
    return found, took


def recall(approximate: list[list[int]], exact: list[list[int]], k: int) -> float:
    pairs = zip(approximate, exact, strict=True)
    return float(np.mean([len(set(a[:k]) & set(e[:k])) / k for a, e in pairs]))


def measure(
    rows: NDArray[np.float32],
    extra: NDArray[np.float32],
    queries: NDArray[np.float32],
    limit: int,
) -> dict[str, Any]:
    """Exact and approximate search over ``rows``; then ``extra`` rows extend the index."""
    exact = VectorCache(ann_threshold=0)
    fill(exact, rows)
    exact_found, exact_took = timed_searches(exact, queries, limit)
    del exact
    gc.collect()
    jobs: list[Callable[[], None]] = []
    approximate = VectorCache(ann_threshold=1, run=jobs.append)
    fill(approximate, rows)
    rss_before = rss_mb()
    t0 = time.perf_counter()
    jobs.pop()()
    build = time.perf_counter() - t0
    rss_index = rss_mb() - rss_before
    found, took = timed_searches(approximate, queries, limit)
    block = approximate._blocks[MEMORY]  # the benchmark may look inside
    index_mb = block.ann.memory_bytes / 2**20 if block.ann else 0.0
    fill(approximate, extra, first=len(rows))
    t0 = time.perf_counter()
    jobs.pop()()
    extend = time.perf_counter() - t0
    return {
        "n": len(rows),
        "build_s": round(build, 2),
        "exact_p50_ms": quantile_ms(exact_took, 0.50, digits=2),
        "exact_p95_ms": quantile_ms(exact_took, 0.95, digits=2),
        "ann_p50_ms": quantile_ms(took, 0.50, digits=2),
        "ann_p95_ms": quantile_ms(took, 0.95, digits=2),
        "recall_at_10": round(recall(found, exact_found, 10), 4),
        "recall_at_50": round(recall(found, exact_found, 50), 4),
        "extend_ms_per_row": round(extend * 1000 / max(len(extra), 1), 3),
        "index_mb": round(index_mb, 1),
        "index_rss_mb": round(rss_index, 1),
        "rss_mb": rss_mb(),
    }


def run(
    sizes: list[int], queries: int, limit: int, noise: float, extra: int, source: str
) -> dict[str, Any]:
    base, questions = locomo_vectors() if source == "locomo" else random_vectors()
    qs = questions[:queries]
    report: dict[str, Any] = {
        "source": source,
        "noise": noise,
        "limit": limit,
        "queries": len(qs),
        "cpus": os.cpu_count(),
        "loadavg_start": load_average(),
        "sizes": {},
    }
    for size in sizes:
        rows = noisy_rows(base, size + extra, noise)  # the same seed: each size a prefix
        row = measure(rows[:size], rows[size:], qs, limit)
        del rows
        report["sizes"][str(size)] = row
        print(f"{size}: {row}", file=sys.stderr)
        gc.collect()
    report["loadavg_end"] = load_average()
    return report


def table(report: dict[str, Any]) -> str:
    lines = [
        f"rows: {report['source']} vectors, noise {report['noise']}; {report['queries']} "
        f"queries at limit {report['limit']} (k = {max(4 * report['limit'], 64)}); "
        f"{report['cpus']} CPUs, load average {report['loadavg_start']} -> "
        f"{report['loadavg_end']}",
        "",
        "| rows | build s | exact p50 / p95 ms | ANN p50 / p95 ms | recall@10 | recall@50 "
        "| extend ms/row | index MB (usearch / RSS) | RSS MB |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for size, r in report["sizes"].items():
        lines.append(
            f"| {int(size):,} | {r['build_s']} | {r['exact_p50_ms']} / {r['exact_p95_ms']} | "
            f"{r['ann_p50_ms']} / {r['ann_p95_ms']} | {r['recall_at_10']} | {r['recall_at_50']} "
            f"| {r['extend_ms_per_row']} | {r['index_mb']} / {r['index_rss_mb']} | {r['rss_mb']} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--limit", type=int, default=50, help="results per search")
    parser.add_argument("--noise", type=float, default=0.5)
    parser.add_argument("--extra", type=int, default=2000, help="rows added after the build")
    parser.add_argument("--source", choices=("locomo", "random"), default="locomo")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    report = run(sizes, args.queries, args.limit, args.noise, args.extra, args.source)
    print(table(report))
    if args.out:
        print(f"wrote {write_json(args.out, report)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""What each retrieval mechanism costs a search at 100k entries, measured side by side.

The speed benchmark's store (:mod:`benchmarks.speed`: LoCoMo turns cycled to ``--size``
entries, four conversation users in one memory, HNSW built, every search filtered by a user,
top 10) is searched with each configuration in turn, round after round, so every
configuration meets the same machine load (after one pass of each that is not counted, and
each round starting with the next configuration): the p50 of each round, then the median of the
rounds and the ratio to the configuration searched before the retrieval work
(``before``: weighted fusion over raw cosine, no conversation windows). Store-only (the query
vectors precomputed) and live (the local model embeds each query). Usage::

    python -m benchmarks.search_cost --size 100000 --rounds 5 \
        --out benchmarks/results/search_cost.json
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks.locomo import write_json
from benchmarks.speed import USERS, Bench, TimedEmbedder, corpus, corpus_vectors, timed
from memstrata import Fusion, SearchRequest
from memstrata.providers.base import Embedder

#: Search parameters of each configuration, over the speed benchmark's request.
CONFIGS: dict[str, dict[str, Any]] = {
    "before (weighted fusion, no windows)": {"fusion": Fusion.WEIGHTED, "context_weight": 0.0},
    "balanced fusion, no windows": {"context_weight": 0.0},
    "defaults (balanced fusion + windows)": {},
}
BEFORE = "before (weighted fusion, no windows)"


def _p50_ms(values: Sequence[float]) -> float:
    return round(1000 * statistics.median(values), 3)


def _round(
    bench: Bench,
    questions: Sequence[str],
    vectors: Mapping[str, NDArray[np.float32]],
    params: Mapping[str, Any],
    live: bool,
) -> float:
    """The p50 (ms) of one pass over ``questions`` with ``params``."""
    bench.embedder.lookup_only = not live
    if not live:
        bench.embedder.known.update({q: vectors[q] for q in questions})
    times = []
    for i, q in enumerate(questions):
        base = SearchRequest(
            q,
            (bench.memory.id,),
            top_n=10,
            similarity_threshold=0.0,
            keywords_similarity_weight=0.4,
            user_id=f"user-{i % USERS}",
        )
        request = replace(base, **params)
        t0 = time.perf_counter()
        bench.engine.search(bench.actor, request)
        times.append(time.perf_counter() - t0)
    bench.embedder.lookup_only = False
    return _p50_ms(times)


def run(size: int, queries: int, rounds: int, *, model: Embedder | None = None) -> dict[str, Any]:
    """The whole benchmark; ``model`` replaces the local model (tests pass a fake). The local
    model's corpus vectors come from the peers' cache (:func:`benchmarks.speed.corpus_vectors`)."""
    cache = model is None
    if model is None:
        from memstrata.providers.local import LocalEmbedder

        model = LocalEmbedder()
    embedder = TimedEmbedder(model)
    texts, questions = corpus()
    qs = questions[:queries]
    vectors = timed("embed corpus", lambda: corpus_vectors(model, texts, qs, cache))
    report: dict[str, Any] = {"size": size, "queries": len(qs), "rounds": rounds}
    report["loadavg_start"] = [round(x, 2) for x in os.getloadavg()]
    with tempfile.TemporaryDirectory(prefix="memstrata-cost-") as tmp:
        bench = Bench(Path(tmp), embedder)
        timed(f"fill to {size}", lambda: bench.fill_to(size, texts, vectors))
        timed("index", bench.index_ready)
        for mode, live in (("store", False), ("live", True)):
            for params in CONFIGS.values():  # warm-up, not counted
                _round(bench, qs, vectors, params, live)
            seen: dict[str, list[float]] = {name: [] for name in CONFIGS}
            names = list(CONFIGS)
            for r in range(rounds):  # each round starts with the next configuration
                for name in names[r % len(names) :] + names[: r % len(names)]:
                    seen[name].append(_round(bench, qs, vectors, CONFIGS[name], live))
            medians = {name: round(statistics.median(v), 3) for name, v in seen.items()}
            report[mode] = {
                name: {
                    "p50_ms_rounds": seen[name],
                    "p50_ms": medians[name],
                    "vs_before": round(medians[name] / medians[BEFORE], 3),
                }
                for name in CONFIGS
            }
        bench.close()
    report["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    report = run(args.size, args.queries, args.rounds)
    for mode in ("store", "live"):
        print(f"{mode} (p50 ms, median of {args.rounds} rounds; ratio to before):")
        for name, r in report[mode].items():
            print(f"  {name:<40} {r['p50_ms']:7.2f}  x{r['vs_before']:.3f}  {r['p50_ms_rounds']}")
    print(f"load average {report['loadavg_start']} -> {report['loadavg_end']}", file=sys.stderr)
    if args.out:
        write_json(args.out, report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

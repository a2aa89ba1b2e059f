"""What each retrieval mechanism costs a search at 100k entries, measured side by side.

The speed benchmark's store (:mod:`benchmarks.speed.speed`: LoCoMo turns cycled to ``--size``
entries, four conversation users in one memory, HNSW built, every search filtered by a user,
top 10) is searched with every configuration, question by question (each question with each
configuration back to back, the order turning), so a change of the machine's load meets all
configurations alike: the p50 of each round (after one round not counted), then the median of
the rounds and the ratio to the configuration searched before the retrieval work
(``before``: weighted fusion over raw cosine, no conversation windows). Store-only (the query
vectors precomputed) and live (the local model embeds each query); ``--postgres`` on an
embedded PostgreSQL instead of SQLite. Usage::

    python -m benchmarks.speed.search_cost --size 100000 --rounds 5 \
        --out benchmarks/results/search_cost.json
    python -m benchmarks.speed.search_cost --postgres --rounds 3
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks.speed.speed import Bench, TimedEmbedder, corpus, corpus_vectors, timed
from benchmarks.support import load_average, quantile_ms, write_json
from recallery import Fusion
from recallery.providers.base import Embedder
from recallery.store.base import Store

#: Search parameters of each configuration, over the speed benchmark's request.
CONFIGS: dict[str, dict[str, Any]] = {
    "before (weighted fusion, no windows)": {"fusion": Fusion.WEIGHTED, "context_weight": 0.0},
    "balanced fusion, no windows": {"context_weight": 0.0},
    "defaults (balanced fusion + windows)": {},
    "defaults, without context that adapts (context_length 0)": {"context_length": 0},
}
BEFORE = "before (weighted fusion, no windows)"


def _interleaved(
    bench: Bench,
    questions: Sequence[str],
    vectors: Mapping[str, NDArray[np.float32]],
    live: bool,
    rounds: int,
) -> dict[str, list[float]]:
    """Per configuration, the p50 (ms) of each round over ``questions``: every question is
    searched with each configuration back to back (the order turning by one each time), so
    a change in the machine's load meets all of them alike."""
    bench.embedder.lookup_only = not live
    if not live:
        bench.embedder.known.update({q: vectors[q] for q in questions})
    names = list(CONFIGS)
    seen: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds + 1):  # the first round warms up and is not counted
        times: dict[str, list[float]] = {name: [] for name in names}
        for i, q in enumerate(questions):
            base = bench.request(i, q)
            turn = (i + r) % len(names)
            for name in names[turn:] + names[:turn]:
                request = replace(base, **CONFIGS[name])
                t0 = time.perf_counter()
                bench.engine.search(bench.actor, request)
                times[name].append(time.perf_counter() - t0)
        if r:
            for name in names:
                seen[name].append(quantile_ms(times[name], 0.5))
    bench.embedder.lookup_only = False
    return seen


def run(
    size: int,
    queries: int,
    rounds: int,
    *,
    model: Embedder | None = None,
    store: Callable[[], AbstractContextManager[Store | None]] = nullcontext,
) -> dict[str, Any]:
    """The whole benchmark; ``model`` replaces the local model (tests pass a fake), ``store``
    opens the store (default: SQLite). The local model's corpus vectors come from the peers'
    cache (:func:`benchmarks.speed.speed.corpus_vectors`)."""
    cache = model is None
    if model is None:
        from recallery.providers.local import LocalEmbedder

        model = LocalEmbedder()
    embedder = TimedEmbedder(model)
    texts, questions = corpus()
    qs = questions[:queries]
    vectors = timed("embed corpus", lambda: corpus_vectors(model, texts, qs, cache))
    report: dict[str, Any] = {"size": size, "queries": len(qs), "rounds": rounds}
    report["loadavg_start"] = load_average()
    with tempfile.TemporaryDirectory(prefix="recallery-cost-") as tmp, store() as opened:
        bench = Bench(Path(tmp), embedder, opened)
        timed(f"fill to {size}", lambda: bench.fill_to(size, texts, vectors))
        timed("index", bench.index_ready)
        for mode, live in (("store", False), ("live", True)):
            seen = _interleaved(bench, qs, vectors, live, rounds)
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
    report["loadavg_end"] = load_average()
    return report


@contextmanager
def postgres() -> Iterator[Store]:
    """A PostgreSQL store in a fresh database of an embedded server, its indexes kept as rows
    arrive (the benchmark closes the store with its engine)."""
    from recallery.store.postgres import PostgresStore
    from recallery.testing.postgres import EmbeddedPostgres

    with EmbeddedPostgres() as pg:
        yield PostgresStore(pg.create_database("cost"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--postgres", action="store_true", help="on an embedded PostgreSQL")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    report = run(
        args.size, args.queries, args.rounds, store=postgres if args.postgres else nullcontext
    )
    report["backend"] = "postgres" if args.postgres else "sqlite"
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

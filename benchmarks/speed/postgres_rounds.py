"""PostgreSQL's keyword rounds with the filter's memory and user checked on the rows the
keyword index matches, against the same statements reading them through the user index
(``search.heap_checked``; issue 53).

Builds the speed benchmark's store at ``--size`` entries in a fresh embedded PostgreSQL (LoCoMo
turns cycled, four users in one memory), vacuumed and analysed, and asks every question as the
``ragflow-sdk`` sends it (top 10, threshold 0, keyword weight 0.7, one user's turns).

- **In search**: passes over every question alternate between the rounds as sent and the same
  rounds through the user index (``--passes`` pairs, in one process): each pass's search p50
  and its rounds' mean and median, as a search meets them (each round once, cold or warm as it
  comes).
- **Alone**: each round a pass sent, timed both ways on one connection, alternating,
  ``--repeats`` times each (warm: the same statement again and again); both must return the
  same rows. The mean and median of the per-round medians, and how many were faster as sent.

Alternating keeps the machine's drift out of the comparison; a whole search's p50 moved by
±20 % between processes here.

    python -m benchmarks.speed.postgres_rounds --out benchmarks/results/postgres-rounds.json
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks.speed.speed import Bench, TimedEmbedder, corpus, corpus_vectors
from benchmarks.support import load_average, write_json

#: How the round's statement compares the columns it checks on the rows it reads, and how an
#: index could answer them.
CHECKED = {"(e.memory_id || '')": "e.memory_id", "(e.user_id || '')": "e.user_id"}


def through_index(sql: str) -> str:
    """``sql`` with the memory and user compared as plain columns."""
    for heap, column in CHECKED.items():
        sql = sql.replace(heap, column)
    return sql


def run(size: int, queries: int, repeats: int, passes: int) -> dict[str, Any]:
    import psycopg

    from recallery.providers.local import LocalEmbedder
    from recallery.store.postgres import PostgresStore, estimates
    from recallery.store.postgres import search as keyword
    from recallery.testing.postgres import EmbeddedPostgres

    model = LocalEmbedder()
    embedder = TimedEmbedder(model)
    texts, questions = corpus()
    asked = questions[:queries]
    vectors = corpus_vectors(model, texts, asked, True)
    embedder.known.update({q: vectors[q] for q in asked})
    embedder.lookup_only = True
    rounds: list[tuple[str, Any, float]] = []
    with tempfile.TemporaryDirectory() as tmp, EmbeddedPostgres() as pg:
        dsn = pg.create_database("rounds")
        bench = Bench(Path(tmp), embedder, PostgresStore(dsn))
        bench.fill_to(size, texts, vectors)
        bench.index_ready()
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("VACUUM ANALYZE entries")
        estimates._KEPT.clear()  # the statistics read before the analysis: read them again
        execute = psycopg.Cursor.execute

        def kept(cur: Any, query: Any, params: Any = None, *args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return execute(cur, query, params, *args, **kwargs)
            finally:
                if str(query).lstrip().startswith("WITH c AS MATERIALIZED"):
                    rounds.append((str(query), params, time.perf_counter() - t0))

        def one_pass() -> list[float]:
            took = []
            for i, question in enumerate(asked):  # the speed benchmark's, at the SDK's weight
                request = replace(bench.request(i, question), keywords_similarity_weight=0.7)
                t0 = time.perf_counter()
                bench.engine.search(bench.actor, request)
                took.append(time.perf_counter() - t0)
            return took

        chosen = keyword.heap_checked
        in_search: dict[str, dict[str, list[float]]] = {}
        psycopg.Cursor.execute = kept  # type: ignore[method-assign,assignment]
        try:
            one_pass()  # warm
            for _ in range(passes):
                for form, rule in (("checked on the rows", chosen), ("through the index", None)):
                    keyword.heap_checked = rule or (lambda *args: ())  # type: ignore[assignment]
                    rounds.clear()
                    took = one_pass()
                    seen = in_search.setdefault(
                        form, {"p50": [], "round mean": [], "round p50": []}
                    )
                    seen["p50"].append(round(1000 * statistics.median(took), 3))
                    spent = [t for _, _, t in rounds]
                    seen["round mean"].append(round(1000 * statistics.fmean(spent), 3))
                    seen["round p50"].append(round(1000 * statistics.median(spent), 3))
            keyword.heap_checked = chosen
            rounds.clear()
            one_pass()  # the rounds the search sends, to time alone
        finally:
            keyword.heap_checked = chosen
            psycopg.Cursor.execute = execute  # type: ignore[method-assign]
        bench.close()
        checked = [(sql, params) for sql, params, _ in rounds if through_index(sql) != sql]
        sent, indexed = [], []
        with psycopg.connect(dsn) as conn:
            conn.execute(
                "SELECT set_config('plan_cache_mode', 'force_custom_plan', false), "
                "set_config('max_parallel_workers_per_gather', '0', false)"
            )
            for sql, params in checked:
                other = through_index(sql)
                if conn.execute(sql, params).fetchall() != conn.execute(other, params).fetchall():
                    raise AssertionError(f"the two forms differ:\n{sql}")
                mine: list[float] = []
                theirs: list[float] = []
                for _ in range(repeats):
                    for form, seen_times in ((sql, mine), (other, theirs)):
                        t0 = time.perf_counter()
                        conn.execute(form, params).fetchall()
                        seen_times.append(time.perf_counter() - t0)
                sent.append(statistics.median(mine))
                indexed.append(statistics.median(theirs))

    def ms(values: list[float]) -> dict[str, float]:
        return {
            "mean": round(1000 * statistics.fmean(values), 3),
            "median": round(1000 * statistics.median(values), 3),
        }

    return {
        "size": size,
        "queries": queries,
        "in_search": in_search,
        "rounds": len(rounds),
        "rounds_checking_rows": len(checked),
        "repeats": repeats,
        "checked_on_rows_ms": ms(sent),
        "through_user_index_ms": ms(indexed),
        "faster_checked_on_rows": sum(a < b for a, b in zip(sent, indexed, strict=True)),
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5, help="times each round alone, each way")
    parser.add_argument("--passes", type=int, default=3, help="pairs of passes in search")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    start = load_average()
    report = run(args.size, args.queries, args.repeats, args.passes)
    report["loadavg"] = [start, load_average()]
    for form, seen in report["in_search"].items():
        print(f"in search, {form}: {seen}")
    print(
        f"alone, {report['rounds_checking_rows']} of {report['rounds']} rounds: checked on the "
        f"rows {report['checked_on_rows_ms']} ms, through the user index "
        f"{report['through_user_index_ms']} ms; faster {report['faster_checked_on_rows']}"
    )
    if args.out:
        write_json(args.out, report)
    return report


if __name__ == "__main__":
    main()

"""PostgreSQL's keyword rounds with the filter's memory and user checked on the rows the
keyword index matches, against the same statements reading them through the user index
(``search.heap_checked``; issue 53).

Builds the speed benchmark's store at ``--size`` entries in a fresh embedded PostgreSQL (LoCoMo
turns cycled, four users in one memory), runs every question once as the ``ragflow-sdk``
sends it (top 10, threshold 0, keyword weight 0.7, one user's turns) and keeps each keyword
round the search sent. Then each round is timed both ways on one connection, alternating,
``--repeats`` times each: as sent, and with the memory and user compared as columns an index
holds (what PostgreSQL's planner then intersects with the user index's bitmap). Both must
return the same rows. Reported: the mean and median of the per-round medians, and how many
rounds were faster as sent. Timing statements one by one, alternating, keeps the machine's
drift out of the comparison; a whole search's p50 moved by ±20 % between processes here.

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


def run(size: int, queries: int, repeats: int) -> dict[str, Any]:
    import psycopg

    from recallery.providers.local import LocalEmbedder
    from recallery.store.postgres import PostgresStore
    from recallery.testing.postgres import EmbeddedPostgres

    model = LocalEmbedder()
    embedder = TimedEmbedder(model)
    texts, questions = corpus()
    asked = questions[:queries]
    vectors = corpus_vectors(model, texts, asked, True)
    embedder.known.update({q: vectors[q] for q in asked})
    embedder.lookup_only = True
    rounds: list[tuple[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp, EmbeddedPostgres() as pg:
        dsn = pg.create_database("rounds")
        bench = Bench(Path(tmp), embedder, PostgresStore(dsn))
        bench.fill_to(size, texts, vectors)
        bench.index_ready()
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("ANALYZE entries")
        execute = psycopg.Cursor.execute

        def kept(cur: Any, query: Any, params: Any = None, *args: Any, **kwargs: Any) -> Any:
            if str(query).lstrip().startswith("WITH c AS MATERIALIZED"):
                rounds.append((str(query), params))
            return execute(cur, query, params, *args, **kwargs)

        psycopg.Cursor.execute = kept  # type: ignore[method-assign,assignment]
        try:
            for i, question in enumerate(asked):  # the speed benchmark's, at the SDK's weight
                request = replace(bench.request(i, question), keywords_similarity_weight=0.7)
                bench.engine.search(bench.actor, request)
        finally:
            psycopg.Cursor.execute = execute  # type: ignore[method-assign]
        bench.close()
        checked = [(sql, params) for sql, params in rounds if through_index(sql) != sql]
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
                    for form, seen in ((sql, mine), (other, theirs)):
                        t0 = time.perf_counter()
                        conn.execute(form, params).fetchall()
                        seen.append(time.perf_counter() - t0)
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
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    start = load_average()
    report = run(args.size, args.queries, args.repeats)
    report["loadavg"] = [start, load_average()]
    print(
        f"{report['rounds_checking_rows']} of {report['rounds']} rounds: checked on the rows "
        f"{report['checked_on_rows_ms']} ms, through the user index "
        f"{report['through_user_index_ms']} ms; faster {report['faster_checked_on_rows']}"
    )
    if args.out:
        write_json(args.out, report)
    return report


if __name__ == "__main__":
    main()

"""The search at 100k entries, this tree's code against another git revision's, in alternating
processes: what a change costs the searches users send, with everything else it came with.

:mod:`benchmarks.speed.search_cost` prices one mechanism against the same code without it; this
script compares whole codes. Each process builds the speed benchmark's store with its own
tree's code (``benchmarks.speed.speed.Bench``: LoCoMo turns cycled to ``--size`` entries, four
conversation users in one memory, HNSW built), then searches every question (top 10,
filtered by a user, threshold 0, the server's defaults otherwise) with the ``ragflow-sdk``'s
keyword weight 0.7 and the speed benchmark's 0.4, store-only (query vectors precomputed) and
live (the local model embeds each query): the p50 of each round after one not counted.
Processes alternate between the trees (``--repeats`` pairs), so the machine's drift meets
both alike; reported per setting: every round's p50, their median per tree, and the ratio of
this tree's median to the revision's.

The revision is checked out into a temporary ``git worktree`` (removed afterwards) beside a
link to ``../shared``; its ``benchmarks.speed.speed`` (``benchmarks.speed`` before the benchmarks
were grouped) must have ``Bench``, ``corpus``,
``corpus_vectors`` and ``USERS``, as every revision since the speed benchmark has. Both trees
embed through the cache in this tree's ``benchmarks/.cache``.

``--postgres``: each process builds its store in a fresh database of an embedded PostgreSQL
(the tree's own ``recallery.testing.postgres``), vacuums and analyses it, and also counts what
one search sends the server: a wrapper on psycopg's cursor and transaction counts, per search
of one pass over the questions (store-only), the statements on read-only connections (the
search's; background writers such as the use recorder are not counted), the transactions among
them (each a ``BEGIN`` and a ``COMMIT``, two round trips more) and the statements of the
calling thread (the keyword leg runs on a second connection beside it). ``--latency-ms``: the
network between the service and its database, simulated: while searches are timed, each
statement waits that long before it is sent and each transaction twice that (its ``BEGIN`` and
``COMMIT``), a sleep that holds no lock, as a wait on a socket does. The embedded server is
reached over a local socket, where a round trip costs a few microseconds; a database on another
host of the same network costs 0.1 to 0.5 ms a round trip. Usage::

    python -m benchmarks.speed.search_revisions --against abb034f --repeats 3 \\
        --out benchmarks/results/search-revisions.json
    python -m benchmarks.speed.search_revisions --postgres --against c7b725a --repeats 1
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

#: Computed here, not imported: a child runs this file with the other tree's ``benchmarks``.
REPO = Path(__file__).resolve().parents[2]
WEIGHTS = (0.7, 0.4)
MODES = ("store", "live")


class _Statements:
    """Counts what the searches of this process send PostgreSQL, by wrapping psycopg's
    ``Cursor.execute`` and ``Connection.transaction`` (read-only connections only)."""

    def __init__(self, latency_ms: float = 0.0) -> None:
        import threading

        import psycopg

        self.on = self.timing = False
        self.delay = latency_ms / 1000
        self.statements = self.transactions = self.main = 0
        self._thread = threading.get_ident()
        execute, transaction = psycopg.Cursor.execute, psycopg.Connection.transaction
        counter = self

        def counted_execute(cur: Any, *args: Any, **kwargs: Any) -> Any:
            if counter.timing and counter.delay:
                time.sleep(counter.delay)
            if counter.on and cur.connection.read_only:
                counter.statements += 1
                counter.main += threading.get_ident() == counter._thread
            return execute(cur, *args, **kwargs)

        def counted_transaction(conn: Any, *args: Any, **kwargs: Any) -> Any:
            if counter.timing and counter.delay:
                time.sleep(2 * counter.delay)
            if counter.on and conn.read_only:
                counter.transactions += 1
            return transaction(conn, *args, **kwargs)

        psycopg.Cursor.execute = counted_execute  # type: ignore[method-assign]
        psycopg.Connection.transaction = counted_transaction  # type: ignore[method-assign]

    def per_search(self, searches: int) -> dict[str, float]:
        n = max(searches, 1)
        return {
            "statements": round(self.statements / n, 2),
            "transactions": round(self.transactions / n, 2),
            "statements_calling_thread": round(self.main / n, 2),
            "round_trips": round((self.statements + 2 * self.transactions) / n, 2),
        }


@contextmanager
def _store(postgres: bool) -> Iterator[tuple[Any, str]]:
    """None (the benchmark's SQLite file) or a PostgreSQL store in a fresh embedded server,
    with its DSN."""
    if not postgres:
        yield None, ""
        return
    from recallery.store.postgres import PostgresStore
    from recallery.testing.postgres import EmbeddedPostgres

    with EmbeddedPostgres() as pg:
        dsn = pg.create_database("revisions")
        yield PostgresStore(dsn), dsn


def _settled(dsn: str) -> None:
    """The freshly loaded table vacuumed and analysed before it is timed: left to autovacuum,
    its run landed in one tree's first rounds (a round's p50 of 121 ms against 34). The
    statistics the keyword search read before (none: the table was never analysed) are
    dropped where the tree keeps them, so its first minute does not search without them
    (2.3 keyword rounds a search instead of 1.15)."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
    try:
        from recallery.store.postgres import estimates
    except ImportError:  # a tree from before the statistics were kept
        return
    estimates._KEPT.clear()


def _child(
    size: int,
    queries: int,
    rounds: int,
    fake: bool,
    postgres: bool = False,
    latency_ms: float = 0.0,
) -> dict[str, Any]:
    """In a process whose path starts with the tree measured: build its store and time it
    (``fake``: with the deterministic test embedder instead of the local model; ``postgres``:
    on an embedded PostgreSQL, counting statements per search and each round trip delayed
    ``latency_ms`` while timed)."""
    try:
        from benchmarks.speed.speed import USERS, Bench, TimedEmbedder, corpus, corpus_vectors
    except ModuleNotFoundError:  # a revision from before the benchmarks were grouped
        from benchmarks.speed import (  # type: ignore[attr-defined,no-redef]
            USERS,
            Bench,
            TimedEmbedder,
            corpus,
            corpus_vectors,
        )
    from recallery import SearchRequest
    from recallery.providers.base import Embedder

    model: Embedder
    if fake:
        from recallery.testing import DeterministicEmbedder

        model = DeterministicEmbedder(dimension=384)
    else:
        from recallery.providers.local import LocalEmbedder

        model = LocalEmbedder()
    embedder = TimedEmbedder(model)
    texts, questions = corpus()
    qs = questions[:queries]
    vectors = corpus_vectors(model, texts, qs, not fake)
    counter = _Statements(latency_ms) if postgres else None
    with (
        tempfile.TemporaryDirectory(prefix="recallery-revisions-") as tmp,
        _store(postgres) as (db, dsn),
    ):
        bench = Bench(Path(tmp), embedder, db) if postgres else Bench(Path(tmp), embedder)
        bench.fill_to(size, texts, vectors)
        bench.index_ready()
        if postgres:
            _settled(dsn)
        embedder.known.update({q: vectors[q] for q in qs})  # what store-only looks up
        out: dict[str, Any] = {}

        def search(i: int, q: str, weight: float) -> float:
            # built here, not by Bench.request: older revisions lack it, and it fixes the weight
            request = SearchRequest(
                q,
                (bench.memory.id,),
                top_n=10,
                similarity_threshold=0.0,
                keywords_similarity_weight=weight,
                user_id=f"user-{i % USERS}",
            )
            t0 = time.perf_counter()
            bench.engine.search(bench.actor, request)
            return time.perf_counter() - t0

        _delaying(counter)
        for mode in MODES:
            embedder.lookup_only = mode == "store"
            for weight in WEIGHTS:
                seen = []
                for r in range(rounds + 1):  # the first round warms up and is not counted
                    times = [search(i, q, weight) for i, q in enumerate(qs)]
                    if r:
                        seen.append(round(1000 * statistics.median(times), 3))
                out[f"{mode} {weight}"] = seen
        if counter is not None:
            counter.timing = False
            embedder.lookup_only = True
            for weight in WEIGHTS:
                counter.on = True
                for i, q in enumerate(qs):
                    search(i, q, weight)
                counter.on = False
                out[f"per search {weight}"] = counter.per_search(len(qs))
                counter.statements = counter.transactions = counter.main = 0
        bench.close()
    return out


def _delaying(counter: _Statements | None) -> None:
    """Round trips delayed from now on (the store is built and settled)."""
    if counter is not None:
        counter.timing = True


@contextmanager
def worktree(revision: str) -> Iterator[Path]:
    """``revision`` checked out in a temporary folder, with ``shared`` beside it."""
    with tempfile.TemporaryDirectory(prefix="recallery-rev-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", str(tree), revision],
            check=True,
            capture_output=True,
        )
        (Path(tmp) / "shared").symlink_to(REPO.parent / "shared")
        try:
            yield tree
        finally:
            subprocess.run(
                ["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)],
                check=False,
                capture_output=True,
            )


def _measure(
    tree: Path,
    size: int,
    queries: int,
    rounds: int,
    fake: bool,
    postgres: bool = False,
    latency_ms: float = 0.0,
) -> dict[str, Any]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tree / "src"), str(tree)])
    env.setdefault("PEERS_CACHE_DIR", str(REPO / "benchmarks" / ".cache"))
    args = [
        os.path.abspath(sys.executable),
        __file__,
        "--child",
        str(size),
        str(queries),
        str(rounds),
        str(fake),
        str(postgres),
        str(latency_ms),
    ]
    done = subprocess.run(args, env=env, cwd=tree, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"the process measuring {tree} failed:\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def run(
    against: str,
    size: int,
    queries: int,
    rounds: int,
    repeats: int,
    *,
    fake: bool = False,
    postgres: bool = False,
    latency_ms: float = 0.0,
) -> dict[str, Any]:
    """The whole comparison; ``fake``: both trees embed with the deterministic test embedder
    (tests), not the local model; ``postgres``: on an embedded PostgreSQL, each round trip
    delayed ``latency_ms`` while searches are timed."""
    from benchmarks.support import load_average  # (the parent: this tree's)

    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    report: dict[str, Any] = {"this": head, "against": against, "size": size, "queries": queries}
    report["store"] = "postgres" if postgres else "sqlite"
    if postgres:
        report["latency_ms"] = latency_ms
    report["loadavg_start"] = load_average()
    rounds_of: dict[str, dict[str, list[float]]] = {"this": {}, "against": {}}
    counted: dict[str, dict[str, Any]] = {"this": {}, "against": {}}
    with worktree(against) as old:
        for _ in range(repeats):
            for name, tree in (("against", old), ("this", REPO)):
                for setting, seen in _measure(
                    tree, size, queries, rounds, fake, postgres, latency_ms
                ).items():
                    if setting.startswith("per search"):
                        counted[name][setting] = seen  # the same in every process
                    else:
                        rounds_of[name].setdefault(setting, []).extend(seen)
    if postgres:
        report["per_search"] = counted
    report["settings"] = {
        setting: _compared(rounds_of["this"][setting], rounds_of["against"][setting])
        for setting in rounds_of["this"]
    }
    report["loadavg_end"] = load_average()
    return report


def _compared(this: list[float], against: list[float]) -> dict[str, Any]:
    """Both trees' round p50s, the median of each, and this tree's over the revision's."""
    mine, theirs = statistics.median(this), statistics.median(against)
    return {
        "this_p50_ms_rounds": this,
        "against_p50_ms_rounds": against,
        "this_p50_ms": mine,
        "against_p50_ms": theirs,
        "ratio": round(mine / theirs, 3),
    }


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--child"]:
        size, queries, rounds = (int(a) for a in argv[1:4])
        postgres, latency = argv[5:6] == ["True"], float(argv[6]) if len(argv) > 6 else 0.0
        print(json.dumps(_child(size, queries, rounds, argv[4] == "True", postgres, latency)))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--against", required=True, help="a git revision")
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=2, help="pairs of processes")
    parser.add_argument("--postgres", action="store_true", help="on an embedded PostgreSQL")
    parser.add_argument(
        "--latency-ms", type=float, default=0.0, help="a round trip's delay (with --postgres)"
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    report = run(
        args.against,
        args.size,
        args.queries,
        args.rounds,
        args.repeats,
        postgres=args.postgres,
        latency_ms=args.latency_ms,
    )
    print(f"{report['this']} against {report['against']}, p50 ms (median of the rounds):")
    for setting, r in report["settings"].items():
        print(
            f"  {setting:<10} {r['this_p50_ms']:7.2f} vs {r['against_p50_ms']:7.2f}  x{r['ratio']}"
        )
    for name, counts in report.get("per_search", {}).items():
        print(f"  per search, {name}: {counts}")
    print(f"load average {report['loadavg_start']} -> {report['loadavg_end']}", file=sys.stderr)
    if args.out:
        # imported here, not at the top: a child runs this file with the other tree's modules
        from benchmarks.support import write_json

        write_json(args.out, report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Writes under concurrency in one process: N client threads adding turns through the engine.

The engine is built as a deployment builds it (the default model registry: the local MiniLM
behind the batching embedder, which joins the texts of concurrent calls into one model call)
on a temporary SQLite store with one raw memory. Each client thread writes its own LoCoMo
turns one ``add_turn`` at a time (distinct texts, four conversation users), so every write
embeds once and commits once; afterwards the memory must hold exactly the turns acknowledged.
Reported per client count: turns/s over the wall time, write
p50/p95, and the load average. One client is the sequential baseline the batcher must not
slow down. Usage::

    python -m benchmarks.speed.concurrent_writes --clients 1 8 --turns 1600
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.speed.speed import USERS, corpus, numbered
from benchmarks.support import load_average, quantile_ms, write_json
from recallery import Engine
from recallery.models import Scope
from recallery.providers.base import Embedder
from recallery.providers.registry import ModelRegistry
from recallery.store.filters import EntryFilter
from recallery.store.sqlite import SQLiteStore


def _engine(folder: Path, model: Embedder | None) -> Engine:
    models = ModelRegistry() if model is None else ModelRegistry(builtin=lambda: model)
    return Engine(SQLiteStore(folder / "writes.db"), models=models)


def measure(clients: int, texts: Sequence[str], model: Embedder | None = None) -> dict[str, Any]:
    """``clients`` threads writing ``texts`` between them (each its own share, in order)."""
    with tempfile.TemporaryDirectory(prefix="recallery-writes-") as tmp:
        engine = _engine(Path(tmp), model)
        actor = engine.principal(engine.create_user("bench").id)
        memory = engine.create_memory(
            actor,
            name="writes",
            memory_type=["raw"],
            memory_size=10 * 1024 * 1024,
            embd_id="all-MiniLM-L6-v2@Builtin",
            llm_id="none@None",
        )
        engine.add_turn(actor, [memory.id], user_input="warm up", agent_response="")
        shares = [list(texts[i::clients]) for i in range(clients)]
        times: list[list[float]] = [[] for _ in range(clients)]
        errors: list[BaseException] = []
        start = threading.Barrier(clients + 1)

        def client(k: int) -> None:
            start.wait()
            try:
                for j, text in enumerate(shares[k]):
                    t0 = time.perf_counter()
                    engine.add_turn(
                        actor,
                        [memory.id],
                        user_input=text,
                        agent_response="",
                        user_id=f"user-{(k + j) % USERS}",
                    )
                    times[k].append(time.perf_counter() - t0)
            except BaseException as exc:  # a failed write is reported, not hidden
                errors.append(exc)

        threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
        for t in threads:
            t.start()
        load = load_average()
        start.wait()
        t0 = time.perf_counter()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        written = sum(len(t) for t in times)
        with engine.store.read() as r:
            stored = len(r.entry_ids(Scope.of(memory.id), EntryFilter())) - 1  # not the warm-up
        engine.close()
    if errors:
        raise RuntimeError(f"{len(errors)} writes failed: {errors[0]!r}") from errors[0]
    if stored != written:
        raise RuntimeError(f"{written} turns acknowledged, {stored} stored")
    every = [x for t in times for x in t]
    return {
        "clients": clients,
        "turns": written,
        "stored": stored,
        "turns_per_s": round(written / wall, 1),
        "write_p50_ms": quantile_ms(every, 0.5, "floor"),
        "write_p95_ms": quantile_ms(every, 0.95, "floor"),
        "loadavg": [load, load_average()],
    }


def run(
    clients: Sequence[int], turns: int, rounds: int = 1, model: Embedder | None = None
) -> dict[str, Any]:
    """Every client count ``rounds`` times, in turn; ``model`` replaces the local model."""
    texts, _ = corpus()
    batch = list(numbered(texts, turns))
    seen: dict[int, list[dict[str, Any]]] = {c: [] for c in clients}
    for _ in range(rounds):
        for c in clients:
            seen[c].append(measure(c, batch, model))
    return {
        "turns": turns,
        "rounds": rounds,
        "by_clients": {
            str(c): {
                "turns_per_s": round(statistics.median(r["turns_per_s"] for r in runs), 1),
                "runs": runs,
            }
            for c, runs in seen.items()
        },
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--turns", type=int, default=1600, help="turns per measurement")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    report = run(args.clients, args.turns, args.rounds)
    for c, row in report["by_clients"].items():
        last = row["runs"][-1]
        print(
            f"{c} clients: {row['turns_per_s']} turns/s (median of {args.rounds}); last run "
            f"p50 {last['write_p50_ms']} ms, p95 {last['write_p95_ms']} ms, load {last['loadavg']}"
        )
    if args.out:
        write_json(args.out, report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Speed and scale of one peer, measured as `benchmarks/speed/speed.py` measures recallery.

Runs inside the peers' venv, one process per peer (`benchmarks/peers/run_speed.py` calls it):

    python -m benchmarks.peers.speed_worker PEER --workdir DIR --out FILE [--sizes 10000,100000]

Same data as recallery's speed benchmark: LoCoMo turn texts cycled with a counter (`text (#i)`),
four user ids (`user-{i % 4}`) in one store, each search filtered by one of them, LoCoMo questions
as queries. Vectors come from recallery's local embedder: live inside the peer's add/search, or
precomputed (the cached LoCoMo vectors; a numbered copy reuses its base text's vector).

1. ingest: `--writes` single adds (batch 1) with the live embedder, from an empty store;
2. per size: fill up to it with precomputed vectors in batches of `--batch` (the peer's batch
   API; mem0 has none, so its vector store's `insert`), then `--late-writes` single live adds,
   then `--queries` searches live and store-only (k = 10); peak RSS and CPU seconds.

Each size has a time budget (`--budget` seconds); past it the size is recorded as timed out and
larger sizes are skipped. The JSON is rewritten after every size, so a killed run keeps its work.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks.peers import DRIVERS, driver_factory
from benchmarks.peers.base import PEER_ENV, EmbedFn, Item, PeerDriver, Vectors
from benchmarks.peers.embedding import cached_vectors, locomo_texts, make_embedder
from benchmarks.quality.locomo import DEFAULT_DATA, load_conversations, turn_text
from benchmarks.support import load_average, peak_rss_mb, quantile_ms, write_json

USERS = 4
K = 10
BULK_API = {
    "mem0-qdrant": "mem0 vector_store.insert (Qdrant upsert); Memory.add has no batch form",
    "mem0-faiss": "mem0 vector_store.insert (FAISS add + one index save per batch)",
    "langgraph-memory": "store.batch([PutOp, ...])",
    "langgraph-sqlite": "store.batch([PutOp, ...])",
    "chroma-persistent": "collection.add(ids=[...], embeddings=[...])",
}


@dataclass(frozen=True)
class Corpus:
    texts: list[str]
    questions: list[str]
    vectors: dict[str, NDArray[np.float32]]


def load_corpus(data: Path, embedder_kind: str, queries: int) -> tuple[Corpus, EmbedFn]:
    """LoCoMo turn texts and questions with their cached vectors, and the live embed function."""
    convs = load_conversations(data)
    embedder = make_embedder(embedder_kind)
    vectors = cached_vectors(embedder, locomo_texts(convs))
    texts = [turn_text(t) for c in convs for t in c.turns]
    questions = [q.question for c in convs for q in c.questions][:queries]
    embedder.embed(["warm-up"])  # the model load is no part of any timing
    return Corpus(texts, questions, vectors), embedder.embed


class TimedEmbed:
    """The live embed function, timing each call (to split a write into embed and store)."""

    def __init__(self, embed: EmbedFn) -> None:
        self.embed = embed
        self.last = 0.0

    def __call__(self, texts: Sequence[str]) -> NDArray[np.float32]:
        t0 = time.perf_counter()
        out = self.embed(texts)
        self.last = time.perf_counter() - t0
        return out


class Budget:
    def __init__(self, seconds: float) -> None:
        self.deadline = time.perf_counter() + seconds

    @property
    def expired(self) -> bool:
        return time.perf_counter() > self.deadline


class SpeedRun:
    """One peer driver, filled and searched like recallery in `benchmarks/speed/speed.py`."""

    def __init__(self, driver: PeerDriver, corpus: Corpus, embed: TimedEmbed, batch: int) -> None:
        self.driver = driver
        self.corpus = corpus
        self.embed = embed
        self.batch = batch
        self.count = 0
        vectors = getattr(driver, "vectors", None)
        if not isinstance(vectors, Vectors):
            raise TypeError(f"{driver.name} keeps no `vectors`: it cannot switch live/cached")
        self.vectors = vectors
        bulk: Callable[[Sequence[Item]], None] | None = getattr(driver, "add_bulk", None)
        self.bulk = bulk or driver.add

    def item(self, i: int, prefix: str = "", live: bool = False) -> Item:
        base = self.corpus.texts[i % len(self.corpus.texts)]
        user = f"user-{i % USERS}"
        vector = None if live else self.corpus.vectors[base]
        return Item(f"n{i}", user, f"{user}/s{i // 100}", f"{prefix}{base} (#{i})", vector)

    def single_writes(
        self, n: int, budget: Budget | None = None, prefix: str = ""
    ) -> dict[str, Any]:
        """n adds of one item each, embedded live inside the peer (end to end)."""
        self.vectors.use(self.embed)
        total: list[float] = []
        embed: list[float] = []
        for _ in range(n):
            if budget is not None and budget.expired:
                break
            item = self.item(self.count, prefix, live=True)
            t0 = time.perf_counter()
            self.driver.add([item])
            total.append(time.perf_counter() - t0)
            embed.append(self.embed.last)
            self.count += 1
        store = [t - e for t, e in zip(total, embed, strict=True)]
        return {
            "n": len(total),
            "turns_per_s": round(len(total) / sum(total), 1) if total else None,
            "write_p50_ms": quantile_ms(total, 0.5, "floor"),
            "write_p95_ms": quantile_ms(total, 0.95, "floor"),
            "embed_p50_ms": quantile_ms(embed, 0.5, "floor"),
            "store_p50_ms": quantile_ms(store, 0.5, "floor"),
            "store_p95_ms": quantile_ms(store, 0.95, "floor"),
            "embed_share": round(sum(embed) / sum(total), 3) if total else None,
        }

    def fill_to(self, size: int, budget: Budget) -> dict[str, Any]:
        """Precomputed vectors, `batch` items per call of the peer's batch API (store cost)."""
        self.vectors.use(None)
        start, t0, c0 = self.count, time.perf_counter(), time.process_time()
        while self.count < size and not budget.expired:
            n = min(self.batch, size - self.count)
            self.bulk([self.item(self.count + j) for j in range(n)])
            self.vectors.forget()
            self.count += n
        seconds = time.perf_counter() - t0
        added = self.count - start
        return {
            "n": added,
            "batch": self.batch,
            "seconds": round(seconds, 2),
            "cpu_s": round(time.process_time() - c0, 2),
            "turns_per_s": round(added / seconds, 1) if added and seconds else None,
            "complete": self.count >= size,
        }

    def searches(self, live: bool, budget: Budget) -> dict[str, Any]:
        """Each question filtered to one user, k = 10; live embeds the query inside the peer."""
        self.vectors.use(self.embed if live else None)
        total: list[float] = []
        embed: list[float] = []
        hits = 0
        for i, q in enumerate(self.corpus.questions):
            if budget.expired:
                break
            vector = None if live else self.corpus.vectors[q]
            t0 = time.perf_counter()
            found = self.driver.search(f"user-{i % USERS}", q, vector, K)
            total.append(time.perf_counter() - t0)
            embed.append(self.embed.last if live else 0.0)
            hits += len(found)
            self.vectors.forget()
        out: dict[str, Any] = {
            "n": len(total),
            "p50_ms": quantile_ms(total, 0.5, "floor"),
            "p95_ms": quantile_ms(total, 0.95, "floor"),
            "mean_hits": round(hits / len(total), 2) if total else None,
        }
        if live and total:
            out["embed_p50_ms"] = quantile_ms(embed, 0.5, "floor")
            out["embed_share"] = round(sum(embed) / sum(total), 3)
        return out


def measure_size(run: SpeedRun, size: int, args: argparse.Namespace) -> dict[str, Any]:
    """Fill to `size`, then late single writes and both kinds of search, within the budget."""
    budget = Budget(args.budget)
    t0, c0 = time.perf_counter(), time.process_time()
    record: dict[str, Any] = {"size": size, "fill": run.fill_to(size, budget)}
    complete = record["fill"]["complete"]
    if complete:
        record["write"] = run.single_writes(args.late_writes, budget, prefix="late ")
        record["search_live"] = run.searches(True, budget)
        record["search_store"] = run.searches(False, budget)
        complete = record["search_store"]["n"] == len(run.corpus.questions)
    record["status"] = "ok" if complete else "timed out"
    record["entries"] = run.count
    record["wall_s"] = round(time.perf_counter() - t0, 2)
    record["cpu_s"] = round(time.process_time() - c0, 2)
    record["rss_mb"] = peak_rss_mb()
    return record


def skipped(size: int, reason: str) -> dict[str, Any]:
    return {"size": size, "status": "skipped", "reason": reason}


def run_peer(args: argparse.Namespace) -> None:
    corpus, embed = load_corpus(args.data, args.embedder, args.queries)
    live = TimedEmbed(embed)
    driver = driver_factory(args.peer)(args.workdir, live)
    run = SpeedRun(driver, corpus, live, args.batch)
    c0 = time.process_time()
    report: dict[str, Any] = {
        "peer": args.peer,
        "embedder": args.embedder,
        "queries": len(corpus.questions),
        "k": K,
        "users": USERS,
        "budget_s": args.budget,
        "bulk_api": BULK_API.get(args.peer, "driver.add"),
        "python": platform.python_version(),
        "loadavg_start": load_average(),
        "ingest_live": run.single_writes(args.writes),
        "rss_mb_after_ingest": peak_rss_mb(),
        "sizes": [],
    }
    try:
        for size in args.sizes:
            if report["sizes"] and report["sizes"][-1]["status"] != "ok":
                report["sizes"].append(skipped(size, "a smaller size timed out"))
                continue
            report["sizes"].append(measure_size(run, size, args))
            print(f"{args.peer} {size}: {report['sizes'][-1]}", file=sys.stderr, flush=True)
            _save(args.out, report, c0)
    finally:
        driver.close()
    _save(args.out, report, c0)


def _save(out: Path, report: dict[str, Any], c0: float) -> None:
    report["cpu_s"] = round(time.process_time() - c0, 2)
    report["peak_rss_mb"] = peak_rss_mb()
    report["loadavg_end"] = load_average()
    write_json(out, report)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("peer", choices=sorted(DRIVERS))
    parser.add_argument(
        "--workdir", type=Path, required=True, help="where the peer keeps its files"
    )
    parser.add_argument("--out", type=Path, required=True, help="result JSON")
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated store sizes")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--writes", type=int, default=300, help="single live adds from empty")
    parser.add_argument("--late-writes", type=int, default=100, help="single live adds per size")
    parser.add_argument("--batch", type=int, default=1000, help="items per fill call")
    parser.add_argument("--budget", type=float, default=600.0, help="seconds per size")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--embedder", default="local", choices=["local", "hash"])
    args = parser.parse_args(argv)
    args.sizes = sorted(int(s) for s in args.sizes.split(","))
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    for name, value in {**PEER_ENV, "MEM0_DIR": str(args.workdir / ".mem0")}.items():
        os.environ.setdefault(name, value)  # before the peer's package is imported
    run_peer(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Speed and scale of recallery: ingest rate, write and search latency, store-only latency.

Texts are LoCoMo turns (read from ../shared, never copied), cycled with a counter so every
entry is distinct; four conversation user ids share one memory and every search filters by
one of them. Three measurements:

- ``ingest``: turns per second written one ``add_turn`` at a time through the engine with the
  real local embedder (end to end), and the same in batches of 64; p50/p95 of a single write
  with the embedding share separated.
- ``search``: p50/p95 of ``engine.search`` at each size with the real embedder on the query
  (live), and the share of that spent embedding the query.
- ``store``: the same searches with the query vector precomputed (store-only).

Usage::

    python -m benchmarks.speed.speed --sizes 10000,100000 --out benchmarks/results/speed.json

`benchmarks/peers/run_speed.py` measures the peer memory systems the same way; `--queries 200`
matches its default.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks.quality.locomo import load_conversations, turn_text
from benchmarks.support import load_average, peak_rss_mb, quantile_ms, write_json
from recallery import Engine, Principal, SearchRequest, TurnInput
from recallery.providers.base import Embedder
from recallery.providers.registry import ModelRegistry
from recallery.settings import Settings
from recallery.store.base import Store
from recallery.store.sqlite import SQLiteStore

USERS = 4
BATCH = 1000


class TimedEmbedder:
    """Wraps an embedder: remembers vectors of known texts and times every real call."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.known: dict[str, NDArray[np.float32]] = {}
        self.last_seconds = 0.0
        self.lookup_only = False

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        if self.lookup_only and all(t in self.known for t in texts):
            self.last_seconds = 0.0
            return np.stack([self.known[t] for t in texts])
        t0 = time.perf_counter()
        out = self.inner.embed(texts)
        self.last_seconds = time.perf_counter() - t0
        return out


def corpus() -> tuple[list[str], list[str]]:
    convs = load_conversations()
    texts = [turn_text(t) for c in convs for t in c.turns]
    questions = [q.question for c in convs for q in c.questions]
    return texts, questions


def numbered(texts: list[str], n: int) -> Iterator[str]:
    for i in range(n):
        yield f"{texts[i % len(texts)]} (#{i})"


class Bench:
    def __init__(self, workdir: Path, embedder: TimedEmbedder, store: Store | None = None) -> None:
        """One memory in ``store`` (default: a SQLite file in ``workdir``)."""
        self.embedder = embedder
        if store is None:
            ann = Settings.from_env().ann_threshold
            store = SQLiteStore(workdir / "speed.db", ann_threshold=ann)
        self.engine = Engine(store, models=ModelRegistry(builtin=lambda: embedder))
        self.actor: Principal = self.engine.principal(self.engine.create_user("bench").id)
        self.memory = self.engine.create_memory(
            self.actor,
            name="speed",
            memory_type=["raw"],
            memory_size=10 * 1024 * 1024,
            embd_id="all-MiniLM-L6-v2@Builtin",
            llm_id="none@None",
        )
        self.memory_size_unlimited()
        self.count = 0

    def memory_size_unlimited(self) -> None:
        """Benchmarks measure scale, not eviction: lift the budget past the API's limit."""
        with self.engine.store.write() as w:
            w.update_memory(self.memory.id, {"memory_size": 1 << 40})

    def single_writes(self, texts: list[str]) -> dict[str, Any]:
        total, embed = [], []
        for text in texts:
            t0 = time.perf_counter()
            self.engine.add_turn(
                self.actor,
                [self.memory.id],
                user_input=text,
                agent_response="",
                user_id=f"user-{self.count % USERS}",
            )
            total.append(time.perf_counter() - t0)
            embed.append(self.embedder.last_seconds)
            self.count += 1
        store = [t - e for t, e in zip(total, embed, strict=True)]
        return {
            "n": len(texts),
            "turns_per_s": round(len(texts) / sum(total), 1),
            "write_p50_ms": quantile_ms(total, 0.5, "floor"),
            "write_p95_ms": quantile_ms(total, 0.95, "floor"),
            "embed_p50_ms": quantile_ms(embed, 0.5, "floor"),
            "store_p50_ms": quantile_ms(store, 0.5, "floor"),
            "store_p95_ms": quantile_ms(store, 0.95, "floor"),
            "embed_share": round(sum(embed) / sum(total), 3),
        }

    def batched_writes(self, texts: list[str], batch: int) -> dict[str, Any]:
        t0 = time.perf_counter()
        embed = 0.0
        for i in range(0, len(texts), batch):
            chunk = texts[i : i + batch]
            turns = [
                TurnInput(t, user_id=f"user-{(self.count + j) % USERS}")
                for j, t in enumerate(chunk)
            ]
            self.engine.add_messages(self.actor, [self.memory.id], turns)
            embed += self.embedder.last_seconds
            self.count += len(chunk)
        seconds = time.perf_counter() - t0
        return {
            "n": len(texts),
            "batch": batch,
            "turns_per_s": round(len(texts) / seconds, 1),
            "embed_share": round(embed / seconds, 3),
        }

    def fill_to(
        self, size: int, texts: list[str], vectors: dict[str, NDArray[np.float32]]
    ) -> dict[str, Any]:
        """Bulk-load with precomputed vectors (store cost only) until the memory holds ``size``."""
        start, t0, c0 = self.count, time.perf_counter(), time.process_time()
        self.embedder.lookup_only = True
        base = {t: v for t, v in vectors.items()}
        while self.count < size:
            n = min(BATCH, size - self.count)
            chunk = [
                f"{texts[(self.count + j) % len(texts)]} (#{self.count + j})" for j in range(n)
            ]
            for c in chunk:
                self.embedder.known[c] = base[c.rsplit(" (#", 1)[0]]
            turns = [
                TurnInput(t, user_id=f"user-{(self.count + j) % USERS}")
                for j, t in enumerate(chunk)
            ]
            self.engine.add_messages(self.actor, [self.memory.id], turns)
            for c in chunk:
                del self.embedder.known[c]
            self.count += n
        self.embedder.lookup_only = False
        seconds = time.perf_counter() - t0
        added = self.count - start
        return {
            "n": added,
            "batch": BATCH,
            "seconds": round(seconds, 2),
            "cpu_s": round(time.process_time() - c0, 2),
            "turns_per_s": round(added / seconds, 1) if added else None,
        }

    def index_ready(self, timeout: float = 1800.0) -> dict[str, Any]:
        """Search once (the store catches up and, past its threshold, starts building the
        approximate index in the background), then wait until the index covers every row:
        the searches measured after this are the steady state. Reports the build's seconds."""
        store = self.engine.store
        request = SearchRequest("warm up", (self.memory.id,), top_n=10, user_id="user-0")
        t0 = time.perf_counter()
        self.embedder.lookup_only = False
        self.engine.search(self.actor, request)
        if not isinstance(store, SQLiteStore):
            return {"index": None}
        threshold = Settings.from_env().ann_threshold
        if threshold <= 0 or self.count < threshold:
            return {"index": "exact"}
        while (store.vectors_indexed(self.memory.id) or 0) < self.count:
            if time.perf_counter() - t0 > timeout:
                raise TimeoutError(f"the approximate index was not ready after {timeout} s")
            time.sleep(0.2)
            self.engine.search(self.actor, request)  # syncs rows written since
        return {"index": "hnsw", "ready_after_s": round(time.perf_counter() - t0, 2)}

    def request(self, i: int, question: str) -> SearchRequest:
        """The ``i``-th search: top 10, threshold 0, keyword weight 0.4, one user's turns."""
        return SearchRequest(
            question,
            (self.memory.id,),
            top_n=10,
            similarity_threshold=0.0,
            keywords_similarity_weight=0.4,
            user_id=f"user-{i % USERS}",
        )

    def searches(
        self, questions: list[str], vectors: dict[str, NDArray[np.float32]], live: bool
    ) -> dict[str, Any]:
        total, embed = [], []
        self.embedder.lookup_only = not live
        if not live:
            self.embedder.known.update({q: vectors[q] for q in questions})
        for i, q in enumerate(questions):
            t0 = time.perf_counter()
            self.engine.search(self.actor, self.request(i, q))
            total.append(time.perf_counter() - t0)
            embed.append(self.embedder.last_seconds)
        self.embedder.lookup_only = False
        out = {
            "n": len(questions),
            "p50_ms": quantile_ms(total, 0.5, "floor"),
            "p95_ms": quantile_ms(total, 0.95, "floor"),
        }
        if live:
            out["embed_p50_ms"] = quantile_ms(embed, 0.5, "floor")
            out["embed_share"] = round(sum(embed) / sum(total), 3)
        return out

    def close(self) -> None:
        self.engine.close()


def timed(label: str, fn: Callable[[], Any]) -> Any:
    t0 = time.perf_counter()
    out = fn()
    print(f"  {label}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return out


def run(
    sizes: list[int],
    queries: int,
    writes: int,
    *,
    embedder: Embedder | None = None,
    late: int = 200,
) -> dict[str, Any]:
    """The whole benchmark; ``embedder`` replaces the local model (tests pass a fake)."""
    if embedder is not None:
        return _run(sizes, queries, writes, TimedEmbedder(embedder), late, cache=False)
    from recallery.providers.local import LocalEmbedder

    return _run(sizes, queries, writes, TimedEmbedder(LocalEmbedder()), late, cache=True)


def corpus_vectors(
    embedder: Embedder, texts: list[str], questions: list[str], cache: bool
) -> dict[str, NDArray[np.float32]]:
    """Text -> vector for every turn and question; `cache`: the peers' cache of the local model's
    LoCoMo vectors (benchmarks/.cache), so recallery and the peers rank the very same vectors."""
    if cache:
        from benchmarks.peers.embedding import cached_vectors, locomo_texts

        return cached_vectors(embedder, locomo_texts(load_conversations()))
    vectors = dict(zip(texts, embedder.embed(texts), strict=True))
    vectors.update(zip(questions, embedder.embed(questions), strict=True))
    return vectors


def _run(
    sizes: list[int], queries: int, writes: int, embedder: TimedEmbedder, late: int, cache: bool
) -> dict[str, Any]:
    texts, questions = corpus()
    qs = questions[:queries]
    vectors = timed("embed corpus", lambda: corpus_vectors(embedder.inner, texts, qs, cache))
    report: dict[str, Any] = {"model": embedder.model_id, "loadavg_start": load_average()}
    report["sizes"] = {}
    with tempfile.TemporaryDirectory(prefix="recallery-speed-") as tmp:
        bench = Bench(Path(tmp), embedder)
        fresh = list(numbered(texts, writes))
        report["ingest_single"] = timed("single writes", lambda: bench.single_writes(fresh))
        batch = [f"{t} [b]" for t in numbered(texts, 2 * writes)]
        report["ingest_batched"] = timed("batched writes", lambda: bench.batched_writes(batch, 64))
        for size in sizes:
            t0, c0 = time.perf_counter(), time.process_time()
            fill = timed(f"fill to {size}", lambda s=size: bench.fill_to(s, texts, vectors))  # type: ignore[misc]
            writes_at = bench.single_writes(list(numbered([f"late {t}" for t in texts], late)))
            index = timed("index", bench.index_ready)
            report["sizes"][str(size)] = {
                "entries": bench.count,
                "fill": fill,
                "write": writes_at,
                "vector_index": index,
                "search_live": timed("live", lambda: bench.searches(qs, vectors, True)),
                "search_store": timed("store", lambda: bench.searches(qs, vectors, False)),
                "rss_mb": peak_rss_mb(),
                "wall_s": round(time.perf_counter() - t0, 2),
                "cpu_s": round(time.process_time() - c0, 2),
            }
            print(f"{size}: {report['sizes'][str(size)]}", file=sys.stderr)
        bench.close()
    report["loadavg_end"] = load_average()
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--writes", type=int, default=300)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    report = run(sizes, args.queries, args.writes)
    for size, row in report["sizes"].items():
        print(
            f"| {size} | {row['write']['write_p50_ms']} / {row['write']['write_p95_ms']} | "
            f"{row['search_live']['p50_ms']} / {row['search_live']['p95_ms']} | "
            f"{row['search_store']['p50_ms']} / {row['search_store']['p95_ms']} | "
            f"{row['rss_mb']} |"
        )
    if args.out:
        print(f"wrote {write_json(args.out, report)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

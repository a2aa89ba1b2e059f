"""SciFact through REST: retrieval on data that is neither conversation nor tuned on.

LoCoMo and MADial-Bench are dialogue; a memory service also holds facts and documents, and
its fusion has to hold there too. SciFact (``../shared/benchmarks/scifact``, the BEIR test
split: 300 claims, 339 relevant abstracts among 5,183; CC BY-NC 2.0, read in place for
evaluation, never copied) is written the way an SDK user would load a corpus into memory:
each abstract (title, then its sentences) one ``POST /api/v1/messages`` with an empty
``agent_response``, one session per abstract, spread over as many memories as RAGFlow's
10 MB ``memory_size`` cap needs; each claim one ``GET /api/v1/messages/search`` over all of
them with the SDK's parameters (``rest_locomo.SDK_SEARCH``). Scores: nDCG@10 (binary
relevance, as BEIR computes it) and recall at 10 and 50, beside BM25, dense MiniLM and the
naive min-max hybrid over the very same stored texts and vectors, in the same run.

    python -m benchmarks.quality.rest_scifact --out benchmarks/results/rest-scifact.json

Nothing here was tuned on this set: it is for reporting only.
"""

from __future__ import annotations

import argparse
import csv
import io
import math
import re
import time
import zipfile
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.quality.rest_locomo import (
    SDK_SEARCH,
    Api,
    Baselines,
    Doc,
    local_embedder,
    report,
    served,
)
from benchmarks.support import REPO, peak_rss_mb, quantile_ms
from recallery.providers.base import Embedder

SCIFACT = REPO.parent / "shared" / "benchmarks" / "scifact"
#: Abstracts per memory: under RAGFlow's 10 MB cap with their vectors (about 3 KB each).
PER_MEMORY = 2_000
KS = (10, 50)
_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"")


def sentences(field: str) -> list[str]:
    """The sentences of a corpus ``abstract`` (printed as a list of quoted strings)."""
    return [a or b for a, b in _QUOTED.findall(field)]


def load(folder: Path = SCIFACT) -> tuple[dict[str, str], list[tuple[str, tuple[str, ...]]]]:
    """The corpus (doc id → title and abstract) and the test queries (claim, relevant ids):
    the unique claims of ``claims_validation.csv`` with their ``cited_doc_ids``."""
    with zipfile.ZipFile(folder / "scifact.zip") as z:

        def rows(name: str) -> list[dict[str, str]]:
            return list(csv.DictReader(io.TextIOWrapper(z.open(name), encoding="utf-8")))

        corpus = {
            r["doc_id"]: " ".join([r["title"].strip(), *sentences(r["abstract"])])
            for r in rows("corpus_train.csv")
        }
        claims: dict[str, tuple[str, set[str]]] = {}
        for r in rows("claims_validation.csv"):
            claims.setdefault(r["id"], (r["claim"], set()))[1].update(
                re.findall(r"\d+", r["cited_doc_ids"])
            )
    return corpus, [(claim, tuple(sorted(cited))) for claim, cited in claims.values()]


def ndcg_at(gold: Sequence[str], ranked: Sequence[str], k: int) -> float:
    """Binary-relevance nDCG@k."""
    relevant = set(gold)
    dcg = sum(1 / math.log2(r + 2) for r, d in enumerate(ranked[:k]) if d in relevant)
    ideal = sum(1 / math.log2(r + 2) for r in range(min(len(relevant), k)))
    return dcg / ideal if ideal else 0.0


def recall(gold: Sequence[str], ranked: Sequence[str], k: int) -> float:
    return len(set(gold) & set(ranked[:k])) / len(set(gold)) if gold else 1.0


def scores(gold: Sequence[str], ranked: Sequence[str]) -> dict[str, float]:
    return {"nDCG@10": ndcg_at(gold, ranked, 10)} | {f"R@{k}": recall(gold, ranked, k) for k in KS}


def write(
    api: Api, corpus: Mapping[str, str], writers: int, per_memory: int
) -> tuple[list[str], list[Doc], float]:
    """The abstracts, ``writers`` at a time, ``per_memory`` to a memory."""
    ids = sorted(corpus, key=int)
    count = math.ceil(len(ids) / per_memory)
    memories = [api.create_memory(f"scifact-{n}") for n in range(count)]

    def one(n: int) -> Doc:
        doc = ids[n]
        mid, content = api.add(
            memories[n // per_memory], corpus[doc], session=f"doc-{doc}", agent="library"
        )
        return Doc(mid, doc, content)

    t0 = time.perf_counter()
    with ThreadPoolExecutor(writers) as pool:
        docs = list(pool.map(one, range(len(ids))))
    return memories, docs, time.perf_counter() - t0


Queries = Sequence[tuple[str, tuple[str, ...]]]


def run(
    embedder: Embedder,
    data: tuple[Mapping[str, str], Queries] | None = None,
    *,
    writers: int = 4,
    per_memory: int = PER_MEMORY,
    search: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Write the corpus (default: all of SciFact's), search every query, score each system."""
    corpus, queries = data or load()
    with served(embedder) as api:
        memories, docs, write_s = write(api, corpus, writers, per_memory)
        vectors = embedder.embed([d.content for d in docs])
        baselines = Baselines(docs, vectors)
        labels = {d.message_id: d.label for d in docs}
        rows: dict[str, list[dict[str, float]]] = {}
        latencies: list[float] = []
        for (claim, gold), vector in zip(
            queries, embedder.embed([c for c, _ in queries]), strict=True
        ):
            t0 = time.perf_counter()
            found = api.search(",".join(memories), claim, **(search or {}))
            latencies.append(time.perf_counter() - t0)
            ranked = {"recallery": [labels[i] for i in found if i in labels]}
            ranked |= baselines.rankings(claim, vector)
            for system, order in ranked.items():
                rows.setdefault(system, []).append(scores(gold, order))
    return {
        "scores": {
            system: {m: round(100 * float(np.mean([r[m] for r in got])), 2) for m in got[0]}
            for system, got in rows.items()
        },
        "cost": {
            "docs_written": len(docs),
            "memories": len(memories),
            "write_docs_per_s": round(len(docs) / write_s, 1),
            "search_p50_ms": quantile_ms(latencies, 0.5, digits=2),
            "search_p95_ms": quantile_ms(latencies, 0.95, digits=2),
            "peak_rss_mb": peak_rss_mb(),
        },
        "setup": {
            "queries": len(queries),
            "writers": writers,
            "search": {**SDK_SEARCH, **(search or {})},
        },
    }


def table(result: Mapping[str, Any]) -> str:
    metrics = list(next(iter(result["scores"].values())))
    lines = [["system", *metrics], ["---"] * (len(metrics) + 1)]
    lines += [[s, *(f"{v[m]:.1f}" for m in metrics)] for s, v in result["scores"].items()]
    return "\n".join("| " + " | ".join(c) + " |" for c in lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--writers", type=int, default=4, help="abstracts written at once")
    parser.add_argument("--param", action="append", default=[], help="a search parameter, k=v")
    parser.add_argument("--no-cache", action="store_true", help="embed live")
    parser.add_argument("--out", type=Path, help="write the result JSON here")
    args = parser.parse_args(argv)
    search = dict(p.partition("=")[::2] for p in args.param)
    result = run(local_embedder(not args.no_cache), writers=args.writers, search=search)
    report(table(result), result, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

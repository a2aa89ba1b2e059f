"""LoCoMo evidence recall through the MCP ``recall`` tool, beside the REST search on the same
data, and what the MCP round trip over streamable HTTP adds to the engine's search time.

One conversation (default the first) is written into a raw-only memory as
:mod:`benchmarks.quality.recallery_locomo` does; every question is then asked three ways: the
engine's ``search``, ``GET /api/v1/messages/search`` and the MCP tool ``recall`` at ``/mcp`` (both
through the app in process, the MCP one with the SDK's own client over streamable HTTP). The
rankings must agree, so the recall figures are equal. Printed: the p50 of each path, what REST
and MCP add to the engine's p50, the same per question (the p50 of each question's path time
less its engine time, steadier on a loaded machine) and the load average. Usage::

    python -m benchmarks.quality.mcp_recall              # conversation 1
    python -m benchmarks.quality.mcp_recall --convs 2 --repeat 3

Every question is also asked at the tool's default ``top_k`` (5), as an agent calls it, with
the engine at the same ``top_n``; the two must return the same ids.

Conversation 1 (199 questions, each asked 3 times) on 2 shared cores: MCP adds 4.72, 4.85,
4.87 and 5.32 ms p50 at top 50 in four runs (load 1.3-2.2; 4.6-5.1 per question), 2.15 and
2.26 ms at the default top 5; REST adds 2.7-3.3 ms at top 50. The engine itself: 5.4-5.7 ms.
What MCP adds grows with the results (about 0.06 ms each): the SDK's client checks every value
against the tool's output schema (about 4 us a value, 1.3-1.8 ms of the top-50 figure), so a
result carries only what an agent reads and acts on (id, memory, type, text, score, valid
time) and the states and ids an entry has.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import anyio
import httpx
import httpx2
from mcp import Client as MCPClient
from mcp.client.streamable_http import streamable_http_client

from benchmarks.quality.locomo import KS, Conversation, load_conversations, recall_at, select
from benchmarks.quality.recallery_locomo import CachingEmbedder, RecalleryRetriever
from benchmarks.support import load_average, quantile_ms
from recallery import SearchRequest
from recallery.api import create_app
from recallery.mcp.http import local_security, mount
from recallery.requests import DEFAULT_TOP_N

BASE = "http://127.0.0.1:9380"
K = max(KS)


def _recall(conv: Conversation, rows: Sequence[Sequence[str]]) -> dict[int, float]:
    """Mean evidence recall@k (%) of the rankings ``rows``, one per question."""
    pairs = list(zip(conv.questions, rows, strict=True))
    return {
        k: round(100 * statistics.fmean(recall_at(q.evidence, r, k) for q, r in pairs), 2)
        for k in KS
    }


async def _measure(
    retriever: RecalleryRetriever, conv: Conversation, repeat: int = 1
) -> dict[str, Any]:
    engine, actor = retriever.engine, retriever.actor
    memory_id = retriever._memories[conv.sample_id]
    _, key = engine.create_api_key(actor, actor.user_id, name="bench")
    app = create_app(engine)
    mount(app, engine, local_security())
    headers = {"Authorization": f"Bearer {key}"}
    ranked: dict[str, list[list[str]]] = {"engine": [], "rest": [], "mcp": []}
    times: dict[str, list[float]] = {
        "engine": [],
        "rest": [],
        "mcp": [],
        "engine_default": [],
        "mcp_default": [],
    }

    def dia(ids: Sequence[int]) -> list[str]:
        return [retriever._dia[i] for i in ids]

    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), headers=headers) as rest,
        httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), headers=headers) as http,
        MCPClient(streamable_http_client(f"{BASE}/mcp", http_client=http)) as mcp,
    ):
        load = load_average()
        for q in [q for _ in range(repeat) for q in conv.questions]:
            t0 = time.perf_counter()
            request = SearchRequest(q.question, (memory_id,), top_n=K, similarity_threshold=0.0)
            hits = engine.search(actor, request)
            times["engine"].append(time.perf_counter() - t0)
            ranked["engine"].append(dia([h.entry.message_id for h in hits]))

            params = {"query": q.question, "memory_id": memory_id, "top_n": K,
                      "similarity_threshold": 0.0}  # fmt: skip
            t0 = time.perf_counter()
            answer = await rest.get(f"{BASE}/api/v1/messages/search", params=params)
            times["rest"].append(time.perf_counter() - t0)
            ranked["rest"].append(dia([h["message_id"] for h in answer.json()["data"]]))

            args = {"query": q.question, "memory": memory_id, "top_k": K, "threshold": 0.0}
            t0 = time.perf_counter()
            result = await mcp.call_tool("recall", args)
            times["mcp"].append(time.perf_counter() - t0)
            assert not result.is_error, result.content
            found = (result.structured_content or {})["results"]
            ranked["mcp"].append(dia([r["id"] for r in found]))

            # the same question at the tool's default top_k, as an agent calls it
            t0 = time.perf_counter()
            request = replace(request, top_n=DEFAULT_TOP_N)
            few = engine.search(actor, request)
            times["engine_default"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            default = {k: v for k, v in args.items() if k != "top_k"}
            result = await mcp.call_tool("recall", default)
            times["mcp_default"].append(time.perf_counter() - t0)
            found = (result.structured_content or {})["results"]
            assert [r["id"] for r in found] == [h.entry.message_id for h in few]
    n = len(conv.questions)
    recall = {path: _recall(conv, rows[:n]) for path, rows in ranked.items()}
    p50 = {path: quantile_ms(t, 0.5) for path, t in times.items()}
    pairs = {"rest": "engine", "mcp": "engine", "mcp_default": "engine_default"}
    added = {
        path: quantile_ms([a - b for a, b in zip(times[path], times[base], strict=True)], 0.5)
        for path, base in pairs.items()
    }
    return {
        "conversation": conv.sample_id,
        "questions": n,
        "repeat": repeat,
        "recall": recall,
        "same_rankings": ranked["mcp"] == ranked["rest"] == ranked["engine"],
        "p50_ms": p50,
        "mcp_overhead_p50_ms": round(p50["mcp"] - p50["engine"], 3),
        "rest_overhead_p50_ms": round(p50["rest"] - p50["engine"], 3),
        "mcp_default_top_k": DEFAULT_TOP_N,
        "mcp_overhead_default_top_k_p50_ms": round(p50["mcp_default"] - p50["engine_default"], 3),
        "added_per_question_p50_ms": added,
        "loadavg": [load, load_average()],
    }


def run(
    conversations: Sequence[Conversation], cache: bool = True, repeat: int = 1
) -> list[dict[str, Any]]:
    from recallery.providers.local import LocalEmbedder

    embedder = CachingEmbedder(LocalEmbedder()) if cache else LocalEmbedder()
    out = []
    for conv in conversations:
        retriever = RecalleryRetriever(embedder)
        try:
            retriever.index(conv)
            out.append(anyio.run(_measure, retriever, conv, repeat))
        finally:
            retriever.close()
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--convs", default="1", help='1-based conversations (default "1")')
    parser.add_argument("--no-cache", action="store_true", help="embed live")
    parser.add_argument("--repeat", type=int, default=1, help="ask every question N times")
    args = parser.parse_args(argv)
    chosen = select(load_conversations(), args.convs)
    for r in run(chosen, cache=not args.no_cache, repeat=args.repeat):
        times = f", each asked {r['repeat']} times" if r["repeat"] > 1 else ""
        print(f"{r['conversation']}: {r['questions']} questions{times}")
        for path in ("engine", "rest", "mcp"):
            cells = "  ".join(f"R@{k} {r['recall'][path][k]:5.1f}" for k in KS)
            print(f"  {path:<6} {cells}  p50 {r['p50_ms'][path]:7.3f} ms")
        print(f"  same rankings on every path: {r['same_rankings']}")
        added = r["added_per_question_p50_ms"]
        print(
            f"  MCP recall over streamable HTTP adds {r['mcp_overhead_p50_ms']:.3f} ms p50 "
            f"({added['mcp']:.3f} per question); REST adds {r['rest_overhead_p50_ms']:.3f} "
            f"({added['rest']:.3f})"
        )
        print(
            f"  at the tool's default top_k ({r['mcp_default_top_k']}) MCP adds "
            f"{r['mcp_overhead_default_top_k_p50_ms']:.3f} ms p50 "
            f"({added['mcp_default']:.3f} per question)"
        )
        start, end = (", ".join(f"{x:.2f}" for x in la) for la in r["loadavg"])
        print(f"  load average {start} -> {end} on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

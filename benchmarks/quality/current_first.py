"""The current fact first (issue 42): update, contradiction and move conversations beside
LoCoMo, through the REST defaults a ``ragflow-sdk`` user sends, with an ablation per mechanism.

One server (``rest_locomo.served``) is written to once through REST:

- the synthetic conversations of :mod:`benchmarks.quality.updates_data` (a development seed and a
  second, held-out seed), each twice: once with its conversation time sent
  (``conversation_time``) and once without (valid time = arrival);
- LoCoMo's ten conversations, as ``rest_locomo`` writes them (no conversation time).

Every question is then searched through ``GET /api/v1/messages/search`` with the SDK's values
(``rest_locomo.SDK_SEARCH``) and, for the ablation, in process with one setting changed at a
time on the same store (same request values). Reported per system and split:

- **current-first**: the turn holding the current fact ranks above every turn it replaced
  (those may be missing; it may not);
- **R@10**: the current turn is among the first ten;
- LoCoMo R@10 and R@5 (all, 1-5, 6-10) as ``rest_locomo`` counts it (R@5: what reordering
  the first ten costs);
- cost: p50 ms per query of each configuration.

BM25, dense MiniLM and the naive min-max hybrid are computed over the same stored texts.
Usage::

    python -m benchmarks.quality.current_first --out benchmarks/results/current-first.json
    python -m benchmarks.quality.current_first --no-locomo --count 6     # the synthetic sets only
    python -m benchmarks.quality.current_first --no-locomo --advice 7    # longer assistant replies
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.quality.locomo import load_conversations, recall_at, select
from benchmarks.quality.rest_locomo import (
    SDK_SEARCH,
    Api,
    Baselines,
    Doc,
    dense_name,
    local_embedder,
    locomo_turns,
    served,
    write_all,
)
from benchmarks.quality.updates_data import KINDS, SynthConversation, generate
from benchmarks.support import quantile_ms, write_json
from recallery import SearchRequest
from recallery.providers.base import Embedder, embed_query
from recallery.settings import Settings

DEV_SEED, HELD_OUT_SEED = 42, 7
#: One line per mechanism: the search fields changed from the defaults.
ABLATION: dict[str, dict[str, Any]] = {
    "defaults, in process": {},
    "no neighbour context, no windows": {"neighbour_span": 0, "context_weight": 0.0},
    "- time in the ranking (recency_weight 0)": {"recency_weight": 0.0},
    "+ a prior on plain queries too (recency_plain 0.3)": {"recency_plain": 0.3},
    "- context that adapts (context_length 0)": {"context_length": 0},
    "context_length 200": {"context_length": 200},
    "context_length 300": {"context_length": 300},
    "context_length 600": {"context_length": 600},
    "context_length 800": {"context_length": 800},
    "- supersession of raw turns (supersession 0)": {"supersession": 0.0},
    "- time orders the band (recency_band 0)": {"recency_band": 0.0},
    "- supersession and the band (both 0)": {"supersession": 0.0, "recency_band": 0.0},
    "+ recency_weight 1.0": {"recency_weight": 1.0},
}


@dataclass(frozen=True)
class Case:
    """One question: the memory it searches, its text, what the split counts as right."""

    memory: str
    text: str
    split: str
    current: str = ""
    stale: tuple[str, ...] = ()
    gold: tuple[str, ...] = ()


def write_synthetic(
    api: Api, conversations: Sequence[SynthConversation], timed: bool, tag: str
) -> tuple[dict[str, list[Doc]], list[Case]]:
    """Each conversation in its own memory, every turn one ``POST /messages`` (user input and
    a long agent response), with its conversation time when ``timed``."""
    docs: dict[str, list[Doc]] = {}
    cases: list[Case] = []
    for conv in conversations:
        memory = api.create_memory(f"{conv.name}-{'timed' if timed else 'untimed'}")
        written = []
        for t in conv.turns:
            body = {
                "memory_id": [memory],
                "agent_id": "assistant",
                "session_id": t.session,
                "user_input": t.user,
                "agent_response": t.agent,
            }
            if timed:
                body["conversation_time"] = t.at.isoformat()
            row = api._data(api._client().post("/messages", json=body))[0]
            written.append(Doc(int(row["message_id"]), t.label, str(row["content"])))
        docs[memory] = written
        cases += [
            Case(memory, q.text, f"{q.kind} {tag}{'' if timed else ' untimed'}", q.current, q.stale)
            for q in conv.questions
        ]
    return docs, cases


def outcome(case: Case, ranked: Sequence[str]) -> dict[str, float]:
    """current-first and R@10 of a synthetic case, R@10 and R@5 of a LoCoMo question."""
    if case.split.startswith("LoCoMo"):
        return {"R@10": recall_at(case.gold, ranked, 10), "R@5": recall_at(case.gold, ranked, 5)}
    place = {label: n for n, label in reversed(list(enumerate(ranked)))}
    mine = place.get(case.current)
    first = mine is not None and all(place.get(s, len(ranked)) > mine for s in case.stale)
    return {"current-first": float(first), "R@10": float(mine is not None and mine < 10)}


def summaries(rows: Sequence[tuple[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    """Mean of each metric per split (LoCoMo also as all / 1-5 / 6-10), in percent."""
    grouped: dict[str, list[dict[str, float]]] = {}
    for split, r in rows:
        grouped.setdefault(split, []).append(r)
        if split.startswith("LoCoMo "):
            number = int(split.split()[1])
            grouped.setdefault("LoCoMo all", []).append(r)
            grouped.setdefault("LoCoMo 1-5" if number <= 5 else "LoCoMo 6-10", []).append(r)
    out = {}
    for split, found in sorted(grouped.items()):
        if split.startswith("LoCoMo ") and split.split()[1].isdigit():
            continue
        metrics = {m: round(100 * float(np.mean([r[m] for r in found])), 1) for m in found[0]}
        out[split] = metrics | {"n": len(found)}
    return out


def searcher(api: Api, fields: Mapping[str, Any] | None) -> Callable[[Case], list[int]]:
    """Search through REST (``fields`` None) or in process with ``fields`` changed."""
    if fields is None:
        return lambda c: api.search(c.memory, c.text)
    engine = api.engine
    assert engine is not None
    admin = engine.principal(engine.ensure_admin(create_key=False)[0].id)
    sent = {**SDK_SEARCH, **fields}

    def search(c: Case) -> list[int]:
        request = SearchRequest(c.text, (c.memory,), **sent)
        return [h.entry.message_id for h in engine.search(admin, request)]

    return search


def run(
    embedder: Embedder,
    count: int,
    locomo: bool,
    ablation: Mapping[str, Mapping[str, Any]],
    settings: Settings | None = None,
    advice: int = 3,
) -> dict[str, Any]:
    with served(embedder, settings) as api:
        docs: dict[str, list[Doc]] = {}
        cases: list[Case] = []
        t0 = time.perf_counter()
        for seed, tag in ((DEV_SEED, "dev"), (HELD_OUT_SEED, "held-out")):
            conversations = generate(count, seed, advice)
            for timed in (True, False):
                d, c = write_synthetic(api, conversations, timed, tag)
                docs |= d
                cases += c
        written = sum(len(d) for d in docs.values())
        write_s = time.perf_counter() - t0
        if locomo:
            convs = load_conversations()
            named = {c.sample_id: locomo_turns(c) for c in select(convs, None)}
            memories, d, _ = write_all(api, named, 4, 1)
            docs |= d
            cases += [
                Case(memories[c.sample_id], q.question, f"LoCoMo {c.number}", gold=q.evidence)
                for c in convs
                for q in c.questions
            ]
        labels = {d.message_id: d.label for found in docs.values() for d in found}
        result: dict[str, Any] = {"recall": {}, "cost": {}}
        configs: dict[str, Mapping[str, Any] | None] = {"recallery (REST defaults)": None}
        configs |= ablation
        for name, fields in configs.items():
            search = searcher(api, fields)
            rows, spent = [], []
            for case in cases:
                t = time.perf_counter()
                found = search(case)
                spent.append(time.perf_counter() - t)
                rows.append((case.split, outcome(case, [labels[i] for i in found if i in labels])))
            result["recall"][name] = summaries(rows)
            result["cost"][name] = {"search_p50_ms": quantile_ms(spent, 0.5, digits=2)}
        result["recall"] |= baselines(embedder, docs, cases)
        result["cost"]["writes"] = {"synthetic_turns_per_s": round(written / write_s, 1)}
    return result


def baselines(
    embedder: Embedder, docs: Mapping[str, Sequence[Doc]], cases: Sequence[Case]
) -> dict[str, dict[str, dict[str, float]]]:
    """BM25, dense and the naive hybrid over each memory's stored texts."""
    contents = sorted({d.content for found in docs.values() for d in found})
    stored = dict(zip(contents, embedder.embed(contents), strict=True))
    per_memory = {
        m: Baselines(found, np.stack([stored[d.content] for d in found]), dense_name(embedder))
        for m, found in docs.items()
    }
    vectors = embed_query(embedder, [c.text for c in cases])
    rows: dict[str, list[tuple[str, dict[str, float]]]] = {}
    for case, vector in zip(cases, vectors, strict=True):
        for system, ranked in per_memory[case.memory].rankings(case.text, vector).items():
            rows.setdefault(system, []).append((case.split, outcome(case, ranked)))
    return {system: summaries(r) for system, r in rows.items()}


def table(result: Mapping[str, Any]) -> str:
    """One row per system: current-first (R@10) per synthetic split, R@10 (R@5) per LoCoMo
    split."""
    splits = sorted({s for systems in result["recall"].values() for s in systems})
    synthetic = [s for s in splits if s.split()[0] in KINDS]
    locomo = [s for s in splits if s.startswith("LoCoMo")]
    header = ["system", *(f"{s} first (R@10)" for s in synthetic)]
    header += [f"{s} R@10 (R@5)" for s in locomo]
    header.append("ms/query")
    lines = [header, ["---"] * len(header)]
    for system, found in result["recall"].items():
        cells = [system]
        for s in synthetic:
            m = found.get(s)
            cells.append(f"{m['current-first']:.1f} ({m['R@10']:.1f})" if m else "–")
        cells += [
            f"{found[s]['R@10']:.1f} ({found[s]['R@5']:.1f})" if s in found else "–" for s in locomo
        ]
        cost = result["cost"].get(system)
        cells.append(f"{cost['search_p50_ms']:.1f}" if cost else "–")
        lines.append(cells)
    return "\n".join("| " + " | ".join(c) + " |" for c in lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=16, help="conversations per seed")
    parser.add_argument("--no-locomo", action="store_true", help="the synthetic sets only")
    parser.add_argument("--only", action="append", default=[], help="ablation lines to run")
    parser.add_argument(
        "--advice", type=int, default=3, help="sentences of advice per assistant reply (0-7)"
    )
    parser.add_argument("--out", type=Path, help="write the result JSON here")
    args = parser.parse_args(argv)
    ablation = {k: v for k, v in ABLATION.items() if not args.only or k in args.only}
    result = run(local_embedder(), args.count, not args.no_locomo, ablation, advice=args.advice)
    print(table(result))
    print(result["cost"])
    if args.out:
        write_json(args.out, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

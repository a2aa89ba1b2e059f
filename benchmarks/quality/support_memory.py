"""Measured beyond the tuning sets (issue 53 item 5): the support set of
:mod:`benchmarks.quality.support_data` beside LoCoMo 1-5, MADial and the current-fact sets,
through REST at the defaults, with each ranking mechanism switched off in turn.

One server (``rest_locomo.served``) is written to once through REST:

- the support set, a development and a held-out seed: four memories each, four customers a
  memory, every turn one ``POST /messages`` with its ``user_id``, ``session_id`` and the
  agent's reply; questions filtered by the customer's ``user_id`` as a ``ragflow-sdk`` caller
  filters, and some with no user filter;
- LoCoMo 1-5 and MADial as ``rest_locomo`` writes them;
- the current-fact sets of :mod:`benchmarks.quality.updates_data` (development seed 42 and
  held-out seed 7, without conversation time); their gold is the turn holding the current
  fact, so R@1 is "the current fact first".

Every question is searched through ``GET /api/v1/messages/search`` with the SDK's values
(``rest_locomo.SDK_SEARCH``: keyword weight 0.7, threshold 0, top 50), once at the defaults
and once per line of :data:`ABLATION`, each switching one mechanism (a ranking stage) off
through its declared knob, sent as a REST parameter. Reported per set: R@1, R@5, R@10 (the
share of a question's gold turns in the first k), current-first where a question has stale
turns (its current turn above every turn it replaced), and per kind of question for the
support set. BM25, dense MiniLM and the naive min-max hybrid rank the same stored texts, a
filtered question over that customer's turns only. Usage::

    python -m benchmarks.quality.support_memory --out benchmarks/results/support-memory.json
    python -m benchmarks.quality.support_memory --no-locomo --no-madial   # the small sets only
"""

from __future__ import annotations

import argparse
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.quality import current_first, support_data, updates_data
from benchmarks.quality.locomo import load_conversations, recall_at, select
from benchmarks.quality.rest_locomo import (
    Api,
    Baselines,
    Doc,
    dense_name,
    local_embedder,
    locomo_turns,
    madial_data,
    served,
    write_all,
)
from benchmarks.support import quantile_ms, write_json
from recallery.providers.base import Embedder, embed_query

DEFAULTS = "recallery (REST defaults)"
#: Each mechanism switched off in turn through its declared knob (recency, off by default,
#: switched on); the last line switches every stage after relevance off.
ABLATION: dict[str, dict[str, Any]] = {
    "- windows (context_weight 0)": {"context_weight": 0.0},
    "- neighbours (neighbour_span 0)": {"neighbour_span": 0},
    "- context that adapts (context_length 0)": {"context_length": 0},
    "- supersession (supersession 0)": {"supersession": 0.0},
    "- time band (recency_band 0)": {"recency_band": 0.0},
    "+ recency (recency_weight 1; off by default)": {"recency_weight": 1.0},
    "- balanced fusion (fusion weighted)": {"fusion": "weighted"},
    "relevance alone (windows, neighbours, supersession, band off)": {
        "context_weight": 0.0,
        "neighbour_span": 0,
        "supersession": 0.0,
        "recency_band": 0.0,
    },
}
KS = (1, 5, 10)
CURRENT_SEEDS = {"current facts dev": 42, "current facts held-out": 7}
SUPPORT_SEEDS = {
    "support dev": support_data.DEV_SEED,
    "support held-out": support_data.HELD_OUT_SEED,
}


@dataclass(frozen=True)
class Query:
    """One question: where it searches, who it is filtered by, what answers it."""

    memory: str
    text: str
    gold: tuple[str, ...]
    group: str
    """The set it is reported under."""
    user: str | None = None
    kind: str = ""
    stale: tuple[str, ...] = ()


@dataclass(frozen=True)
class Written:
    """Every stored turn per memory, the customer of each support turn, and the questions."""

    docs: dict[str, list[Doc]]
    owners: dict[str, str]
    """label -> user_id, support turns only."""
    queries: list[Query]
    write_s: float


def write_support(api: Api, seed: int, group: str, memories: int) -> Written:
    """The support set of ``seed``: each memory's turns in order, each with its customer."""
    docs: dict[str, list[Doc]] = {}
    owners: dict[str, str] = {}
    queries: list[Query] = []
    t0 = time.perf_counter()
    for m in support_data.generate(seed, memories):
        memory = api.create_memory(m.name)
        written = []
        for t in m.turns:
            body = {
                "memory_id": [memory],
                "agent_id": support_data.AGENT,
                "user_id": t.user,
                "session_id": t.session,
                "user_input": t.text,
                "agent_response": t.reply,
            }
            row = api._data(api._client().post("/messages", json=body))[0]
            written.append(Doc(int(row["message_id"]), t.label, str(row["content"])))
            owners[t.label] = t.user
        docs[memory] = written
        queries += [
            Query(memory, q.text, q.gold, group, q.user, q.kind, q.stale) for q in m.questions
        ]
    return Written(docs, owners, queries, time.perf_counter() - t0)


def write_others(api: Api, locomo: bool, madial: bool, count: int) -> Written:
    """LoCoMo 1-5, MADial and the current-fact sets, as their own benchmarks write them."""
    docs: dict[str, list[Doc]] = {}
    queries: list[Query] = []
    t0 = time.perf_counter()
    for group, seed in CURRENT_SEEDS.items() if count else ():
        conversations = updates_data.generate(count, seed)
        found, cases = current_first.write_synthetic(api, conversations, False, group)
        docs |= found
        queries += [
            Query(c.memory, c.text, (c.current,), group, kind=c.split.split()[0], stale=c.stale)
            for c in cases
        ]
    if locomo:
        convs = select(load_conversations(), "1-5")
        memories, found, _ = write_all(api, {c.sample_id: locomo_turns(c) for c in convs}, 4, 1)
        docs |= found
        queries += [
            Query(memories[c.sample_id], q.question, q.evidence, "LoCoMo 1-5")
            for c in convs
            for q in c.questions
        ]
    if madial:
        turns, triples = madial_data()
        memories, found, _ = write_all(api, turns, 4, 1)
        docs |= found
        queries += [Query(memories[u], text, gold, "MADial") for u, text, gold in triples]
    return Written(docs, {}, queries, time.perf_counter() - t0)


def outcome(q: Query, ranked: Sequence[str]) -> dict[str, float]:
    """R@k of the gold turns, and current-first where the question has stale turns."""
    out = {f"R@{k}": recall_at(q.gold, ranked, k) for k in KS}
    if q.stale:
        place = {label: n for n, label in reversed(list(enumerate(ranked)))}
        mine = place.get(q.gold[0])
        first = mine is not None and all(place.get(s, len(ranked)) > mine for s in q.stale)
        out["current-first"] = float(first)
    return out


Rows = list[tuple[Query, dict[str, float]]]


def summarise(rows: Rows, by_kind: bool = False) -> dict[str, dict[str, float]]:
    """Mean of each metric (percent) per set, or per kind of question of the support set
    (both seeds)."""
    grouped: dict[str, list[dict[str, float]]] = {}
    for q, r in rows:
        if by_kind and not q.group.startswith("support"):
            continue
        grouped.setdefault(q.kind if by_kind else q.group, []).append(r)
        if q.group.startswith("support") and not by_kind:
            grouped.setdefault("support all", []).append(r)
    out: dict[str, dict[str, float]] = {}
    for name, found in sorted(grouped.items()):
        metrics = sorted({m for r in found for m in r})
        out[name] = {
            m: round(100 * float(np.mean([r[m] for r in found if m in r])), 1) for m in metrics
        }
        out[name]["n"] = len(found)
    return out


def baselines(embedder: Embedder, w: Written) -> dict[str, Rows]:
    """BM25, dense and the naive hybrid, each question over its memory's turns (a filtered
    one over its customer's turns only)."""
    contents = sorted({d.content for found in w.docs.values() for d in found})
    stored = dict(zip(contents, embedder.embed(contents), strict=True))
    pools: dict[tuple[str, str | None], Baselines] = {}
    rows: dict[str, Rows] = {}
    for q, vector in zip(
        w.queries, embed_query(embedder, [q.text for q in w.queries]), strict=True
    ):
        key = (q.memory, q.user)
        if key not in pools:
            docs = [d for d in w.docs[q.memory] if q.user is None or w.owners[d.label] == q.user]
            vectors = np.stack([stored[d.content] for d in docs])
            pools[key] = Baselines(docs, vectors, dense_name(embedder))
        for system, ranked in pools[key].rankings(q.text, vector).items():
            rows.setdefault(system, []).append((q, outcome(q, ranked)))
    return rows


def run(
    embedder: Embedder,
    *,
    memories: int = 4,
    locomo: bool = True,
    madial: bool = True,
    count: int = 8,
    ablation: Mapping[str, Mapping[str, Any]] = ABLATION,
) -> dict[str, Any]:
    """Write every set once, then search every question with each configuration."""
    with served(embedder) as api:
        parts = [write_support(api, seed, g, memories) for g, seed in SUPPORT_SEEDS.items()]
        parts.append(write_others(api, locomo, madial, count))
        w = Written(
            {m: d for p in parts for m, d in p.docs.items()},
            {label: u for p in parts for label, u in p.owners.items()},
            [q for p in parts for q in p.queries],
            sum(p.write_s for p in parts),
        )
        labels = {d.message_id: d.label for found in w.docs.values() for d in found}
        rows: dict[str, Rows] = {}
        cost: dict[str, Any] = {}
        for name, params in {DEFAULTS: {}, **ablation}.items():
            spent = []
            for q in w.queries:
                user = {"user_id": q.user} if q.user else {}
                t = time.perf_counter()
                found = api.search(q.memory, q.text, **params, **user)
                spent.append(time.perf_counter() - t)
                ranked = [labels[i] for i in found if i in labels]
                rows.setdefault(name, []).append((q, outcome(q, ranked)))
            cost[name] = {"search_p50_ms": quantile_ms(spent, 0.5, digits=2)}
    rows |= baselines(embedder, w)
    turns = sum(len(d) for d in w.docs.values())
    return {
        "revision": _revision(),
        "recall": {system: summarise(r) for system, r in rows.items()},
        "by_kind": {system: summarise(r, by_kind=True) for system, r in rows.items()},
        "ablation": {name: dict(params) for name, params in ablation.items()},
        "cost": cost | {"turns_written": turns, "write_turns_per_s": round(turns / w.write_s, 1)},
        "setup": {
            "search": "rest_locomo.SDK_SEARCH",
            "support_memories_per_seed": memories,
            "current_fact_conversations_per_seed": count,
        },
    }


def _revision() -> str:
    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", *args], capture_output=True, text=True, cwd=Path(__file__).parent
        )
        return done.stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    return head + ("+dirty" if git("status", "--porcelain", "--", "../../src") else "")


def table(result: Mapping[str, Any], key: str = "recall") -> str:
    """R@1 / R@5 / R@10 per system and set (current-first in brackets where counted)."""
    sets = sorted({s for found in result[key].values() for s in found})
    lines = [["system", *sets], ["---"] * (len(sets) + 1)]
    for system, found in result[key].items():
        cells = [system]
        for s in sets:
            m = found.get(s)
            if m is None:
                cells.append("–")
                continue
            cell = f"{m['R@1']:.1f} / {m['R@5']:.1f} / {m['R@10']:.1f}"
            cells.append(cell + (f" ({m['current-first']:.1f})" if "current-first" in m else ""))
        lines.append(cells)
    return "\n".join("| " + " | ".join(c) + " |" for c in lines)


def kind_table(result: Mapping[str, Any], systems: Sequence[str]) -> str:
    """The support set per kind of question: R@1 / R@10 (current-first) of ``systems``."""
    kinds = sorted({k for found in result["by_kind"].values() for k in found})
    lines = [["kind (n)", *systems], ["---"] * (len(systems) + 1)]
    for kind in kinds:
        n = int(result["by_kind"][systems[0]][kind]["n"])
        cells = [f"{kind} ({n})"]
        for system in systems:
            m = result["by_kind"][system][kind]
            cell = f"{m['R@1']:.1f} / {m['R@10']:.1f}"
            cells.append(cell + (f" ({m['current-first']:.1f})" if "current-first" in m else ""))
        lines.append(cells)
    return "\n".join("| " + " | ".join(c) + " |" for c in lines)


def shares(result: Mapping[str, Any], metric: str = "R@10") -> dict[str, dict[str, float]]:
    """Each mechanism's share: the defaults' ``metric`` less the line without it, per set
    (positive: the mechanism helps there)."""
    base = result["recall"][DEFAULTS]
    return {
        name: {s: round(base[s][metric] - m[metric], 1) for s, m in result["recall"][name].items()}
        for name in result["ablation"]
    }


def main(argv: Sequence[str] | None = None, embedder: Embedder | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=4, help="support memories per seed")
    parser.add_argument("--count", type=int, default=8, help="current-fact conversations per seed")
    parser.add_argument("--no-locomo", action="store_true")
    parser.add_argument("--no-madial", action="store_true")
    parser.add_argument("--only", action="append", default=[], help="ablation lines to run")
    parser.add_argument("--out", type=Path, help="write the result JSON here")
    args = parser.parse_args(argv)
    ablation = {k: v for k, v in ABLATION.items() if not args.only or k in args.only}
    result = run(
        embedder or local_embedder(),
        memories=args.memories,
        locomo=not args.no_locomo,
        madial=not args.no_madial,
        count=args.count,
        ablation=ablation,
    )
    print(table(result))
    print(kind_table(result, [DEFAULTS, *ablation, "naive min-max hybrid"]))
    print(shares(result))
    print(result["cost"])
    if args.out:
        write_json(args.out, result)
    return result


if __name__ == "__main__":
    main()

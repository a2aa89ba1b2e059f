"""Retrieval as a ``ragflow-sdk`` user gets it: LoCoMo and MADial-Bench through REST.

A real HTTP server (uvicorn in this process, over ``recallery.api.create_app``) is written
to and searched the way an agent using RAGFlow's SDK does:

- **writes**: ``POST /api/v1/messages``, one call per turn, ``user_input`` = the turn as the
  LoCoMo paper indexes it (``{speaker} said, "{text}"``), ``agent_response`` empty; each
  conversation in its own memory, its turns in order, one ``session_id`` per chat session,
  several conversations written at once (``--writers``); no conversation time is sent, so a
  turn's valid time is when it arrived. ``--within N`` sends N turns of one conversation at
  a time instead (arrival order then differs from conversation order). ``--chat`` sends each
  sentence of a turn as its own message, as people write in a messaging app (recall is then
  also given counting each turn once: its pieces share its label).
- **searches**: ``GET /api/v1/messages/search`` with the SDK's ``keywords_similarity_weight``
  0.7, ``similarity_threshold`` 0 (so recall is measured over a full ranking) and ``top_n``
  50; everything else at the server's defaults.

MADial-Bench (``../shared/benchmarks/madial-bench``, MIT): each user's remembered events are
written as turns of that user's memory (one session per event), and the query is the
dialogue before the turn that should recall a memory; recall@k as its paper defines it.

Beside recallery, in the same run and over the same stored texts: BM25 (k1 1.2, b 0.75),
dense cosine with the same MiniLM vectors, and the naive hybrid of the two (each leg min-max
normalised over the pool, weight 0.5). Usage::

    python -m benchmarks.quality.rest_locomo --out benchmarks/results/rest.json
    python -m benchmarks.quality.rest_locomo --within 4   # one conversation's turns concurrently
    python -m benchmarks.quality.rest_locomo --chat --no-madial  # each sentence a message
    python -m benchmarks.quality.rest_locomo --set neighbour_span=0   # a server setting changed
    python -m benchmarks.quality.rest_locomo --postgres   # on PostgreSQL (embedded) instead
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import re
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import uvicorn
from numpy.typing import NDArray

from benchmarks.quality.locomo import (
    BM25Index,
    Conversation,
    load_conversations,
    recall_at,
    select,
    turn_text,
)
from benchmarks.quality.recallery_locomo import CachingEmbedder
from benchmarks.support import REPO, peak_rss_mb, quantile_ms, write_json
from recallery import Engine
from recallery.api import create_app
from recallery.providers.base import Embedder, embed_query
from recallery.providers.e5 import MODEL_ID as E5_MODEL_ID
from recallery.providers.registry import ModelRegistry
from recallery.settings import Settings
from recallery.store import open_store
from recallery.store.base import Store
from recallery.store.sqlite import SQLiteStore
from recallery.testing.ports import HOST, free_port

MADIAL = REPO.parent / "shared" / "benchmarks" / "madial-bench"
KS = (5, 10)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
#: What the SDK sends (RAGFlow's defaults), with the threshold at 0 so a full ranking comes back.
SDK_SEARCH = {"keywords_similarity_weight": 0.7, "similarity_threshold": 0.0, "top_n": 50}
EMBD_ID = "BAAI/bge-small-en-v1.5@Builtin"
#: ``--model e5``: the local multilingual-e5-small (``recallery.providers.e5``).
E5_EMBD_ID = "multilingual-e5-small@Builtin"
LLM_ID = "gpt-4o-mini@OpenAI"
MEMORY_SIZE = 10 * 1024 * 1024
NAIVE_WEIGHT = 0.5
Row = tuple[str, dict[int, float]]
"""(group, recall at each k) of one query."""


@dataclass(frozen=True)
class Doc:
    """One stored turn: the id it was given, what the benchmark calls it, and its text."""

    message_id: int
    label: str
    content: str


@dataclass(frozen=True)
class Query:
    """One question: the memory it searches, its text, the labels that answer it."""

    memory: str
    text: str
    gold: tuple[str, ...]
    group: str
    """Which split it is reported under (LoCoMo: the conversation number; MADial: "madial")."""


# --- the server -----------------------------------------------------------------------------


@contextmanager
def serving(engine: Engine) -> Iterator[str]:
    """The REST API over ``engine`` on a free loopback port, in a thread; yields its base URL."""
    config = uvicorn.Config(create_app(engine), host=HOST, port=free_port(), log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the benchmark server did not start")
        time.sleep(0.05)
    try:
        yield f"http://{HOST}:{config.port}/api/v1"
    finally:
        server.should_exit = True
        thread.join()


class Api:
    """The calls an SDK user makes, over one HTTP client per thread."""

    def __init__(
        self, url: str, key: str, embd_id: str = EMBD_ID, engine: Engine | None = None
    ) -> None:
        """``engine``: the served engine, for searches a benchmark also runs in process."""
        self.url, self.key, self.embd_id, self.engine = url, key, embd_id, engine
        self._local = threading.local()

    def _client(self) -> httpx.Client:
        client: httpx.Client | None = getattr(self._local, "client", None)
        if client is None:
            headers = {"Authorization": f"Bearer {self.key}"}
            client = httpx.Client(base_url=self.url, headers=headers, timeout=120)
            self._local.client = client
        return client

    def _data(self, response: httpx.Response) -> Any:
        body = response.json()
        if body.get("code") != 0:
            raise RuntimeError(f"{response.request.url}: {body}")
        return body["data"]

    def create_memory(self, name: str) -> str:
        body = {"name": name, "memory_type": ["raw"], "embd_id": self.embd_id, "llm_id": LLM_ID}
        memory = self._data(self._client().post("/memories", json=body))
        self._data(
            self._client().put(f"/memories/{memory['id']}", json={"memory_size": MEMORY_SIZE})
        )
        return str(memory["id"])

    def add(self, memory: str, user_input: str, *, session: str, agent: str) -> tuple[int, str]:
        body = {
            "memory_id": [memory],
            "agent_id": agent,
            "session_id": session,
            "user_input": user_input,
            "agent_response": "",
        }
        written = self._data(self._client().post("/messages", json=body))
        return int(written[0]["message_id"]), str(written[0]["content"])

    def search(self, memory: str, query: str, **params: Any) -> list[int]:
        sent = {"query": query, "memory_id": memory, **SDK_SEARCH, **params}
        found = self._data(self._client().get("/messages/search", params=sent))
        return [int(h["message_id"]) for h in found]


@contextmanager
def served(
    embedder: Embedder, settings: Settings | None = None, embd_id: str = EMBD_ID
) -> Iterator[Api]:
    """A fresh engine with ``embedder`` as its built-in model (the one ``embd_id`` names),
    served over REST; an administrator's calls to it, creating memories with ``embd_id``.
    The store is a temporary SQLite file, or the PostgreSQL database that
    ``settings.database_url`` names."""
    with tempfile.TemporaryDirectory(prefix="recallery-rest-") as tmp:
        if settings is not None and settings.database_url:
            store: Store = open_store(settings)
        else:
            store = SQLiteStore(Path(tmp) / "recallery.db")
        registry = ModelRegistry(builtin=lambda: embedder, e5=lambda: embedder)
        engine = Engine(store, models=registry, settings=settings or Settings())
        try:
            _, key = engine.ensure_admin()
            assert key is not None
            with serving(engine) as url:
                yield Api(url, key, embd_id, engine)
        finally:
            engine.close()


# --- writing the data -----------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    """A turn to write: what ``user_input`` says, its chat session, its benchmark label."""

    text: str
    session: str
    label: str


def write_conversation(api: Api, memory: str, turns: Sequence[Turn], within: int) -> list[Doc]:
    """Write ``turns`` in order, ``within`` at a time (1: each after the previous answered)."""

    def one(turn: Turn) -> Doc:
        mid, content = api.add(memory, turn.text, session=turn.session, agent="assistant")
        return Doc(mid, turn.label, content)

    if within <= 1:
        return [one(t) for t in turns]
    with ThreadPoolExecutor(within) as pool:
        return list(pool.map(one, turns))


def locomo_turns(conv: Conversation, chat: bool = False) -> list[Turn]:
    """The conversation's turns; ``chat``: each sentence of a turn its own message, as people
    send them in a messaging app (each labelled with its turn, so finding any piece finds it)."""
    if not chat:
        return [Turn(turn_text(t), f"{conv.sample_id}/s{t.session}", t.dia_id) for t in conv.turns]
    out = []
    for t in conv.turns:
        pieces = [p for p in SENTENCE_END.split(t.text.strip()) if p.strip()] or [t.text]
        for n, piece in enumerate(pieces):
            caption = t.blip_caption if n == len(pieces) - 1 else None  # with the last piece
            text = turn_text(dataclasses.replace(t, text=piece, blip_caption=caption))
            out.append(Turn(text, f"{conv.sample_id}/s{t.session}", t.dia_id))
    return out


def madial_data(
    folder: Path = MADIAL,
) -> tuple[dict[str, list[Turn]], list[tuple[str, str, tuple[str, ...]]]]:
    """Each user's events as turns (one session per event), and (user, query, gold) triples:
    the query is the dialogue before the turn that should recall a memory."""
    events = [json.loads(line) for line in (folder / "MADial-Bench-en-memory.json").open()]
    dialogues = [json.loads(line) for line in (folder / "MADial-Bench-en-dialogue.json").open()]
    owner = _madial_owners(events, dialogues)
    pools: dict[str, list[Turn]] = {}
    for item in events:
        ((number, event),) = item.items()
        user = f"madial-user-{owner[number]}"
        pools.setdefault(user, []).append(Turn(event["event"], f"{user}/e{number}", number))
    queries = []
    for d in dialogues:
        prefix = "".join(d["dialogue"][1 : d["test-turn"][0]]).strip()
        gold = tuple(str(i) for i in d["relevant-id"])
        queries.append((f"madial-user-{d['user-id']}", prefix, gold))
    return pools, queries


def _madial_owners(
    events: Sequence[Mapping[str, Any]], dialogues: Sequence[Mapping[str, Any]]
) -> dict[str, int]:
    """Which user each event belongs to. The file lists user 1's events, then user 2's: the
    split is where the most citations (an event in a dialogue's gold list) agree with it."""
    numbers = [next(iter(item)) for item in events]
    cites = [(str(i), d["user-id"]) for d in dialogues for i in d["relevant-id"]]

    def agreeing(split: int) -> int:
        first = set(numbers[:split])
        return sum((n in first) == (user == 1) for n, user in cites)

    split = max(range(len(numbers) + 1), key=agreeing)
    return {n: 1 if k < split else 2 for k, n in enumerate(numbers)}


# --- baselines ------------------------------------------------------------------------------


def minmax(values: NDArray[np.float64]) -> NDArray[np.float64]:
    lo, hi = float(values.min()), float(values.max())
    return (values - lo) / (hi - lo) if hi > lo else np.zeros_like(values)


def dense_name(embedder: Embedder) -> str:
    """The dense baseline's row: "dense multilingual-e5-small" for ``--model e5``, else
    "dense MiniLM" (as in every earlier result file)."""
    model = embedder.model_id
    return f"dense {model}" if model == E5_MODEL_ID else "dense MiniLM"


class Baselines:
    """BM25, dense cosine and their naive min-max hybrid over one pool of stored texts."""

    def __init__(
        self, docs: Sequence[Doc], vectors: NDArray[np.float32], dense: str = "dense MiniLM"
    ) -> None:
        """``dense``: the dense baseline's name (the model's)."""
        self.labels = [d.label for d in docs]
        self.bm25 = BM25Index([d.content for d in docs])
        self.vectors = vectors
        self.dense = dense

    def rankings(self, query: str, vector: NDArray[np.float32]) -> dict[str, list[str]]:
        found = self.bm25.scores(query)
        keyword = np.zeros(len(self.labels))
        keyword[list(found)] = list(found.values())
        dense = (self.vectors @ vector).astype(np.float64)
        naive = NAIVE_WEIGHT * minmax(keyword) + (1 - NAIVE_WEIGHT) * minmax(dense)
        return {
            "BM25": self._order(keyword, only_positive=True),
            self.dense: self._order(dense),
            "naive min-max hybrid": self._order(naive),
        }

    def _order(self, scores: NDArray[np.float64], only_positive: bool = False) -> list[str]:
        order = np.lexsort((np.arange(len(scores)), -scores))[:50]
        return [self.labels[i] for i in order if not only_positive or scores[i] > 0]


# --- the run --------------------------------------------------------------------------------


@dataclass
class Pools:
    """What was written: each memory's docs, and the queries against them."""

    docs: dict[str, list[Doc]] = dataclasses.field(default_factory=dict)
    queries: list[Query] = dataclasses.field(default_factory=list)
    write_s: float = 0.0


def write_all(
    api: Api, named: Mapping[str, list[Turn]], writers: int, within: int
) -> tuple[dict[str, str], dict[str, list[Doc]], float]:
    """One memory per name; the names' turns written ``writers`` memories at a time."""
    memories = {name: api.create_memory(name) for name in named}
    t0 = time.perf_counter()
    with ThreadPoolExecutor(writers) as pool:
        written = pool.map(
            lambda name: write_conversation(api, memories[name], named[name], within), named
        )
        docs = {memories[name]: d for name, d in zip(named, written, strict=True)}
    return memories, docs, time.perf_counter() - t0


def recalls(gold: Sequence[str], ranked: Sequence[str]) -> dict[int, float]:
    return {k: recall_at(gold, ranked, k) for k in KS}


def each_turn_once(ranked: Sequence[str]) -> list[str]:
    """``ranked`` with every label after its first place left out. In chat the pieces of
    one turn share its label, so each piece found takes a place of the top k; counted this
    way, a system is charged one place per turn it returns, as it would be where every
    message has its own label."""
    return list(dict.fromkeys(ranked))


def evaluate(
    api: Api,
    embedder: Embedder,
    pools: Pools,
    search: Mapping[str, Any],
) -> tuple[dict[str, list[Row]], dict[str, list[Row]], list[float]]:
    """Every query through REST and through the baselines: recall rows per system (with the
    group of each), the same counting each turn once (:func:`each_turn_once`), and the REST
    latencies."""
    labels = {d.message_id: d.label for docs in pools.docs.values() for d in docs}
    contents = sorted({d.content for docs in pools.docs.values() for d in docs})
    stored = dict(zip(contents, embedder.embed(contents), strict=True))
    baselines = {
        m: Baselines(docs, np.stack([stored[d.content] for d in docs]), dense_name(embedder))
        for m, docs in pools.docs.items()
    }
    query_vectors = embed_query(embedder, [q.text for q in pools.queries])
    rows: dict[str, list[Row]] = {}
    once: dict[str, list[Row]] = {}
    latencies: list[float] = []
    for q, vector in zip(pools.queries, query_vectors, strict=True):
        t0 = time.perf_counter()
        found = api.search(q.memory, q.text, **search)
        latencies.append(time.perf_counter() - t0)
        ranked = {"recallery": [labels[i] for i in found if i in labels]}
        ranked |= baselines[q.memory].rankings(q.text, vector)
        for system, order in ranked.items():
            rows.setdefault(system, []).append((q.group, recalls(q.gold, order)))
            once.setdefault(system, []).append((q.group, recalls(q.gold, each_turn_once(order))))
    return rows, once, latencies


def summary(rows: Sequence[Row], groups: Callable[[str], bool]) -> dict[str, float | int]:
    picked = [r for g, r in rows if groups(g)]
    out: dict[str, float | int] = {"n": len(picked)}
    for k in KS:
        out[f"R@{k}"] = round(100 * float(np.mean([r[k] for r in picked])), 2) if picked else 0.0
    return out


SPLITS: dict[str, Callable[[str], bool]] = {
    "LoCoMo all": lambda g: g.isdigit(),
    "LoCoMo 1-5": lambda g: g.isdigit() and int(g) <= 5,
    "LoCoMo 6-10": lambda g: g.isdigit() and int(g) > 5,
    "MADial": lambda g: g == "madial",
}


def run(
    conversations: Sequence[Conversation],
    *,
    embedder: Embedder,
    madial: bool = True,
    writers: int = 4,
    within: int = 1,
    settings: Settings | None = None,
    search: Mapping[str, Any] | None = None,
    chat: bool = False,
    embd_id: str = EMBD_ID,
) -> dict[str, Any]:
    """Write, search and score; returns recall per system and split, and the costs."""
    with served(embedder, settings, embd_id) as api:
        pools = Pools()
        named = {c.sample_id: locomo_turns(c, chat) for c in conversations}
        memories, docs, seconds = write_all(api, named, writers, within)
        pools.docs.update(docs)
        pools.write_s += seconds
        for c in conversations:
            pools.queries += [
                Query(memories[c.sample_id], q.question, q.evidence, str(c.number))
                for q in c.questions
            ]
        if madial:
            turns, triples = madial_data()
            memories, docs, seconds = write_all(api, turns, writers, 1)
            pools.docs.update(docs)
            pools.write_s += seconds
            pools.queries += [Query(memories[u], text, gold, "madial") for u, text, gold in triples]
        rows, once, latencies = evaluate(api, embedder, pools, search or {})
    turns_written = sum(len(d) for d in pools.docs.values())
    result: dict[str, Any] = {"recall": summaries(rows)}
    if chat:
        result["recall_each_turn_once"] = summaries(once)
    return result | {
        "cost": {
            "turns_written": turns_written,
            "write_turns_per_s": round(turns_written / pools.write_s, 1),
            "search_p50_ms": quantile_ms(latencies, 0.5, digits=2),
            "search_p95_ms": quantile_ms(latencies, 0.95, digits=2),
            "peak_rss_mb": peak_rss_mb(),
        },
        "setup": {
            "writers": writers,
            "within": within,
            "search": {**SDK_SEARCH, **(search or {})},
            "embd_id": embd_id,
        },
    }


def summaries(rows: Mapping[str, Sequence[Row]]) -> dict[str, dict[str, dict[str, float | int]]]:
    return {
        system: {name: summary(r, pick) for name, pick in SPLITS.items()}
        for system, r in rows.items()
    }


def table(result: Mapping[str, Any], key: str = "recall") -> str:
    header = ["system", *(f"{s} R@10 (R@5)" for s in SPLITS)]
    lines = [header, ["---"] * len(header)]
    for system, splits in result[key].items():
        cells = [f"{splits[s]['R@10']:.1f} ({splits[s]['R@5']:.1f})" for s in SPLITS]
        lines.append([system, *cells])
    return "\n".join("| " + " | ".join(c) + " |" for c in lines)


def _setting(pair: str) -> tuple[str, object]:
    name, _, value = pair.partition("=")
    kind = type(getattr(Settings(), name))
    return name, kind(value)


def local_embedder(cached: bool = True, model: str = "minilm") -> Embedder:
    """The local MiniLM (``model`` "e5": multilingual-e5-small), behind the on-disk vector
    cache unless ``cached`` is False."""
    from recallery.providers.e5 import E5Embedder
    from recallery.providers.local import LocalEmbedder

    embedder: Embedder = E5Embedder() if model == "e5" else LocalEmbedder()
    return CachingEmbedder(embedder) if cached else embedder


def report(text: str, result: Mapping[str, Any], out: Path | None) -> None:
    """Print a run's table and costs; write its JSON to ``out`` where given."""
    print(text)
    print(json.dumps(result["cost"]))
    if out:
        print(f"wrote {write_json(out, result)}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--convs", help='1-based LoCoMo conversations, e.g. "1-5" (default: all)')
    parser.add_argument("--no-madial", action="store_true", help="LoCoMo only")
    parser.add_argument("--writers", type=int, default=4, help="conversations written at once")
    parser.add_argument("--within", type=int, default=1, help="turns of one conversation at once")
    parser.add_argument("--set", action="append", default=[], help="a server setting, name=value")
    parser.add_argument(
        "--param", action="append", default=[], help="a search parameter, name=value"
    )
    parser.add_argument("--chat", action="store_true", help="each sentence of a turn a message")
    parser.add_argument("--no-cache", action="store_true", help="embed live (timed end to end)")
    parser.add_argument(
        "--postgres", action="store_true", help="a fresh embedded PostgreSQL, not SQLite"
    )
    parser.add_argument(
        "--model", choices=["minilm", "e5"], default="minilm", help="the local embedding model"
    )
    parser.add_argument("--out", type=Path, help="write the result JSON here")
    args = parser.parse_args(argv)
    embedder = local_embedder(cached=not args.no_cache, model=args.model)
    search = dict(p.partition("=")[::2] for p in args.param)
    conversations = select(load_conversations(), args.convs)
    with contextlib.ExitStack() as stack:
        chosen = dict(_setting(p) for p in args.set)
        if args.postgres:
            from recallery.testing.postgres import EmbeddedPostgres

            chosen["database_url"] = stack.enter_context(EmbeddedPostgres()).dsn
        result = run(
            conversations,
            embedder=embedder,
            madial=not args.no_madial,
            writers=args.writers,
            within=args.within,
            settings=Settings.from_env({}, **chosen),
            search=search,
            chat=args.chat,
            embd_id=E5_EMBD_ID if args.model == "e5" else EMBD_ID,
        )
    result["setup"]["settings"] = args.set
    result["setup"]["store"] = "postgres" if args.postgres else "sqlite"
    text = table(result)
    if "recall_each_turn_once" in result:
        text += "\n\neach turn counted once:\n" + table(result, "recall_each_turn_once")
    report(text, result, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

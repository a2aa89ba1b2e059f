"""LoCoMo evidence recall of recallery itself, through the engine's normal write and search paths.

Per conversation: one raw-only memory; each turn written as ``{speaker} said, "{text}"`` (plus
`` and shared {blip_caption}``) with its session's date as conversation time; each question
searched with ``engine.search``. Usage::

    python -m benchmarks.quality.recallery_locomo                 # all 10 conversations
    python -m benchmarks.quality.recallery_locomo --convs 1-5     # the tuning half
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks.quality.locomo import (
    BM25Retriever,
    Conversation,
    evaluate,
    load_conversations,
    markdown_table,
    select,
    turn_text,
)
from benchmarks.support import REPO, write_json
from recallery import Engine, Fusion, Principal, SearchRequest, TurnInput
from recallery.providers.base import Embedder, QueryEmbedder, embed_query
from recallery.providers.registry import ModelRegistry
from recallery.store.sqlite import SQLiteStore

CACHE = REPO / "benchmarks" / ".cache" / "recallery-vectors"
_LOADING = threading.Lock()


class CachingEmbedder:
    """Wraps an embedder with an on-disk cache, so tuning runs do not re-embed the data."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.seconds = 0.0
        CACHE.mkdir(parents=True, exist_ok=True)

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        return self._cached(texts, "passage")

    def embed_query(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Queries in the model's query form (MiniLM has none: the same vectors as embed)."""
        return self._cached(texts, "query")

    def _cached(self, texts: Sequence[str], form: str) -> NDArray[np.float32]:
        model = self.inner.model_id
        named = isinstance(self.inner, QueryEmbedder)  # MiniLM's files keep their old names
        keys = [
            hashlib.sha1((f"{model}\0{form}\0{t}" if named else t).encode()).hexdigest()
            for t in texts
        ]
        out = np.zeros((len(texts), self.inner.dimension), dtype=np.float32)
        missing = [i for i, k in enumerate(keys) if not (CACHE / f"{k}.npy").exists()]
        if missing:
            t0 = time.perf_counter()
            todo = [texts[i] for i in missing]
            fresh = embed_query(self.inner, todo) if form == "query" else self.inner.embed(todo)
            self.seconds += time.perf_counter() - t0
            for row, i in enumerate(missing):
                np.save(CACHE / f"{keys[i]}.npy", fresh[row])
        # np.load parses each file's header with ast.literal_eval, and CPython 3.11's compiler
        # is not safe to run from several threads at once (a REST run with 8 writers died on
        # "SystemError: AST constructor recursion depth mismatch"): one thread reads at a time.
        with _LOADING:
            for i, k in enumerate(keys):
                out[i] = np.load(CACHE / f"{k}.npy")
        return out


class RecalleryRetriever:
    """The LoCoMo `Retriever` protocol over a real engine on a temporary SQLite store."""

    def __init__(self, embedder: Embedder, **search: Any) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="recallery-locomo-")
        store = SQLiteStore(Path(self._dir.name) / "locomo.db")
        self.engine = Engine(store, models=ModelRegistry(builtin=lambda: embedder))
        self.actor: Principal = self.engine.principal(self.engine.create_user("bench").id)
        self.search_options = search
        self._memories: dict[str, str] = {}
        self._dia: dict[int, str] = {}

    def index(self, conv: Conversation) -> None:
        memory = self.engine.create_memory(
            self.actor,
            name=conv.sample_id,
            memory_type=["raw"],
            memory_size=10 * 1024 * 1024,
            embd_id="all-MiniLM-L6-v2@Builtin",
            llm_id="none@None",
        )
        self._memories[conv.sample_id] = memory.id
        turns = [
            TurnInput(
                turn_text(t), session_id=f"{conv.sample_id}/s{t.session}", conversation_time=t.at
            )
            for t in conv.turns
        ]
        written = self.engine.add_messages(self.actor, [memory.id], turns)
        for turn, entry in zip(conv.turns, written, strict=True):
            self._dia[entry.message_id] = turn.dia_id

    def search(self, conv_id: str, question: str, k: int) -> list[str]:
        request = SearchRequest(
            question,
            (self._memories[conv_id],),
            top_n=k,
            similarity_threshold=0.0,
            **self.search_options,
        )
        return [self._dia[h.entry.message_id] for h in self.engine.search(self.actor, request)]

    def close(self) -> None:
        self.engine.close()
        self._dir.cleanup()


def run(
    conversations: list[Conversation],
    *,
    cache: bool,
    embedder: Embedder | None = None,
    **search: Any,
) -> dict[str, Any]:
    """recallery's recall on `conversations`. The disk cache is keyed by text only, so it wraps
    the local model alone: a given ``embedder`` (tests pass a fake) is used as it is."""
    if embedder is None:
        from recallery.providers.local import LocalEmbedder

        embedder = LocalEmbedder()
        if cache:
            embedder = CachingEmbedder(embedder)
    retriever = RecalleryRetriever(embedder, **search)
    try:
        return evaluate(retriever, conversations)
    finally:
        retriever.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--convs", help='1-based conversations, e.g. "1-5" (default: all)')
    parser.add_argument("--weight", type=float, default=0.5, help="keywords_similarity_weight")
    parser.add_argument("--fusion", default="weighted", choices=["weighted", "rrf"])
    parser.add_argument("--no-cache", action="store_true", help="embed live (timed end to end)")
    parser.add_argument("--no-bm25", action="store_true", help="skip the BM25 baseline row")
    parser.add_argument("--out", type=Path, help="write the result JSON here")
    args = parser.parse_args(argv)
    conversations = select(load_conversations(), args.convs)
    results: dict[str, dict[str, Any]] = {}
    if not args.no_bm25:
        results["BM25 baseline"] = evaluate(BM25Retriever(), conversations)
    results["recallery"] = run(
        conversations,
        cache=not args.no_cache,
        keywords_similarity_weight=args.weight,
        fusion=Fusion(args.fusion),
    )
    print(markdown_table(results))
    if args.out:
        print(f"wrote {write_json(args.out, results)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

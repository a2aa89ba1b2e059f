"""mem0 OSS (`mem0ai`) with `infer=False`, on local Qdrant (on disk) or FAISS.

No LLM is called: `infer=False` stores each message verbatim. mem0's own embedder providers
would load sentence-transformers (torch) or call an API, so the Memory is built with the OpenAI
provider and a dummy key (never called) and its `embedding_model` is then replaced by
`LookupEmbedding`, a mem0 `EmbeddingBase` over recallery's embedder or the precomputed vectors.

mem0 reads MEM0_TELEMETRY and MEM0_DIR at import time: the worker sets them (`base.PEER_ENV`)
before it imports this module.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import numpy as np
from mem0 import Memory
from mem0.configs.embeddings.base import BaseEmbedderConfig
from mem0.embeddings.base import EmbeddingBase
from numpy.typing import NDArray

from benchmarks.peers.base import DIM, EmbedFn, Item, Vectors

Action = Literal["add", "search", "update"] | None


class LookupEmbedding(EmbeddingBase):  # type: ignore[misc]  # mem0 ships no type hints
    """mem0 embedder that asks `Vectors` (live embedding or cached lookup)."""

    def __init__(self, vectors: Vectors) -> None:
        super().__init__(BaseEmbedderConfig(embedding_dims=DIM))
        self.vectors = vectors

    def embed(self, text: str, memory_action: Action = None) -> list[float]:
        vector: list[float] = self.vectors.lookup([text])[0].tolist()
        return vector

    def embed_batch(self, texts: list[str], memory_action: Action = "add") -> list[list[float]]:
        vectors: list[list[float]] = self.vectors.lookup(texts).tolist()
        return vectors


def _store_config(store: str, workdir: Path) -> dict[str, Any]:
    common = {"collection_name": "bench", "embedding_model_dims": DIM, "path": str(workdir / store)}
    if store == "qdrant":
        return {"provider": "qdrant", "config": {**common, "on_disk": True}}
    if store == "faiss":
        return {"provider": "faiss", "config": {**common, "distance_strategy": "cosine"}}
    raise ValueError(f"unknown mem0 vector store {store!r}")


def _disable_hybrid(memory: Memory) -> None:
    """Pin mem0 to semantic search whatever extras are installed (BM25 needs a hub download)."""
    store = memory.vector_store
    if hasattr(store, "_has_bm25_slot"):
        store._has_bm25_slot = False


class Mem0Driver:
    """One mem0 `Memory`; each item is one `add(..., infer=False)` call (mem0 has no batch add)."""

    def __init__(self, store: str, workdir: Path, embed: EmbedFn | None) -> None:
        self.name = f"mem0-{store}"
        self.vectors = Vectors(embed)
        self.memory = Memory.from_config(
            {
                "vector_store": _store_config(store, workdir),
                "embedder": {"provider": "openai", "config": {"api_key": "sk-unused"}},
                "llm": {"provider": "openai", "config": {"api_key": "sk-unused"}},
                "history_db_path": str(workdir / "history.db"),
            }
        )
        self.memory.embedding_model = LookupEmbedding(self.vectors)
        _disable_hybrid(self.memory)

    def add(self, items: Sequence[Item]) -> None:
        if not self.vectors.live:
            self.vectors.items(items)  # registers the texts' vectors for the lookup
        for item in items:
            self.memory.add(
                [{"role": "user", "content": item.text, "name": item.speaker or "user"}],
                user_id=item.user_id,
                metadata={"doc_id": item.id, "session_id": item.session_id},
                infer=False,
            )

    def add_bulk(self, items: Sequence[Item]) -> None:
        """Store-only fill: one `vector_store.insert` per call, payloads as `Memory.add` builds
        them with `infer=False` (mem0 has no batch add; no history rows are written here)."""
        vectors = self.vectors.items(items)
        self.memory.vector_store.insert(
            vectors=vectors.tolist(),
            ids=[str(uuid.uuid4()) for _ in items],
            payloads=[_payload(i) for i in items],
        )

    def search(
        self, user_id: str, query_text: str, query_vector: NDArray[np.float32] | None, k: int
    ) -> list[str]:
        if not self.vectors.live:
            self.vectors.query(query_text, query_vector)
        found = self.memory.search(query_text, top_k=k, filters={"user_id": user_id}, threshold=0.0)
        return [hit["metadata"]["doc_id"] for hit in found["results"]]

    def close(self) -> None:
        client = getattr(self.memory.vector_store, "client", None)
        if client is not None and hasattr(client, "close"):
            client.close()


def _payload(item: Item) -> dict[str, Any]:
    now = datetime.now(UTC).isoformat()
    return {
        "user_id": item.user_id,
        "doc_id": item.id,
        "session_id": item.session_id,
        "role": "user",
        "actor_id": item.speaker or "user",
        "data": item.text,
        "hash": hashlib.md5(item.text.encode()).hexdigest(),
        "created_at": now,
        "updated_at": now,
        "text_lemmatized": item.text,  # what mem0 stores when spaCy is absent
    }


def qdrant(workdir: Path, embed: EmbedFn | None) -> Mem0Driver:
    return Mem0Driver("qdrant", workdir, embed)


def faiss(workdir: Path, embed: EmbedFn | None) -> Mem0Driver:
    return Mem0Driver("faiss", workdir, embed)

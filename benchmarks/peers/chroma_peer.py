"""Chroma (`chromadb`) `PersistentClient` with explicit embeddings, one collection for all users.

Never let Chroma embed by itself: its default embedding function downloads an ONNX MiniLM on first
use. The collection is created with `embedding_function=None` and every add/query passes vectors
(recallery's embedder live, or the precomputed ones cached). Users are separated with `where`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import chromadb
import numpy as np
from chromadb.config import Settings
from numpy.typing import NDArray

from benchmarks.peers.base import EmbedFn, Item, Vectors


class ChromaDriver:
    """One `collection.add` per `add` call (Chroma pays ~13 ms per call, so batch)."""

    name = "chroma-persistent"

    def __init__(self, workdir: Path, embed: EmbedFn | None) -> None:
        self.vectors = Vectors(embed)
        self.client = chromadb.PersistentClient(
            path=str(workdir / "chroma"), settings=Settings(anonymized_telemetry=False)
        )
        self.collection = self.client.get_or_create_collection(
            "bench", embedding_function=None, metadata={"hnsw:space": "cosine"}
        )

    def add(self, items: Sequence[Item]) -> None:
        self.collection.add(
            ids=[i.id for i in items],
            embeddings=self.vectors.items(items),
            documents=[i.text for i in items],
            metadatas=[
                {"user_id": i.user_id, "session_id": i.session_id, "speaker": i.speaker}
                for i in items
            ],
        )

    def search(
        self, user_id: str, query_text: str, query_vector: NDArray[np.float32] | None, k: int
    ) -> list[str]:
        vector = self.vectors.query(query_text, query_vector)
        found = self.collection.query(
            query_embeddings=vector[None, :], n_results=k, where={"user_id": user_id}, include=[]
        )
        return list(found["ids"][0])

    def close(self) -> None:
        self.client.clear_system_cache()


def persistent(workdir: Path, embed: EmbedFn | None) -> ChromaDriver:
    return ChromaDriver(workdir, embed)

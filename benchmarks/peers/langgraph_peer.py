"""LangGraph long-term memory stores: `InMemoryStore` and `SqliteStore` (sqlite-vec).

Layout: namespace ("mem", user_id), key = item id, value {text, speaker, session_id, at};
only `text` is embedded. The store embeds through the `embed` function of its index config,
here `Vectors.lookup` (recallery's embedder live, or the precomputed vectors cached).

Gotchas: SqliteStore reads `text_fields` and InMemoryStore reads `fields` (pass both, or
SqliteStore silently embeds the whole JSON value); this CPython has no loadable SQLite
extensions, so SqliteStore gets a `pysqlite3` connection (pysqlite3-binary) for sqlite-vec.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from langgraph.store.base import BaseStore, PutOp
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore
from numpy.typing import NDArray
from pysqlite3 import dbapi2 as pysqlite3

from benchmarks.peers.base import DIM, EmbedFn, Item, Vectors

NAMESPACE = "mem"


def _index(vectors: Vectors) -> dict[str, Any]:
    def embed(texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = vectors.lookup(texts).tolist()
        return out

    # `text_fields` is what SqliteStore reads, though its IndexConfig type does not declare it.
    return {"embed": embed, "dims": DIM, "fields": ["text"], "text_fields": ["text"]}


def _value(item: Item) -> dict[str, Any]:
    at = item.at.isoformat() if item.at else None
    return {"text": item.text, "speaker": item.speaker, "session_id": item.session_id, "at": at}


class LangGraphDriver:
    """Any LangGraph `BaseStore`; one `batch` of `PutOp`s per `add`."""

    def __init__(self, name: str, store: BaseStore, vectors: Vectors) -> None:
        self.name = name
        self.store = store
        self.vectors = vectors

    def add(self, items: Sequence[Item]) -> None:
        if not self.vectors.live:
            self.vectors.items(items)
        self.store.batch([PutOp((NAMESPACE, i.user_id), i.id, _value(i)) for i in items])

    def search(
        self, user_id: str, query_text: str, query_vector: NDArray[np.float32] | None, k: int
    ) -> list[str]:
        if not self.vectors.live:
            self.vectors.query(query_text, query_vector)
        hits = self.store.search((NAMESPACE, user_id), query=query_text, limit=k)
        return [hit.key for hit in hits]

    def close(self) -> None:
        conn = getattr(self.store, "conn", None)
        if conn is not None:
            conn.close()


def memory(workdir: Path, embed: EmbedFn | None) -> LangGraphDriver:
    vectors = Vectors(embed)
    store = InMemoryStore(index=_index(vectors))  # type: ignore[arg-type]
    return LangGraphDriver("langgraph-memory", store, vectors)


def sqlite(workdir: Path, embed: EmbedFn | None) -> LangGraphDriver:
    vectors = Vectors(embed)
    conn = pysqlite3.connect(
        str(workdir / "store.sqlite"), check_same_thread=False, isolation_level=None
    )
    store = SqliteStore(conn, index=_index(vectors))  # type: ignore[arg-type]
    store.setup()
    return LangGraphDriver("langgraph-sqlite", store, vectors)

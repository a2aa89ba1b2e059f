"""The driver protocol every peer memory system implements, and where its vectors come from.

A driver stores items (one per conversation turn) and answers searches scoped to one user.
It runs in one of two modes:

- cached: each item carries a precomputed unit vector and `search` gets the query's vector, so
  every system stores and ranks the very same vectors and only the store is measured;
- live: the driver is given `embed(texts) -> (n, dim) float32` and embeds inside add and search.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

DIM = 384
PEER_ENV = {
    "MEM0_TELEMETRY": "False",
    "ANONYMIZED_TELEMETRY": "False",
    "HF_HUB_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}
"""Set before a peer is imported: no telemetry, no model hub (mem0 reads these at import)."""
EmbedFn = Callable[[Sequence[str]], NDArray[np.float32]]


@dataclass(frozen=True)
class Item:
    """One memory item: a conversation turn as the peer will store it."""

    id: str
    user_id: str
    """The conversation: every search is scoped to one."""
    session_id: str
    text: str
    vector: NDArray[np.float32] | None = None
    """Unit float32 vector of `text`; None in live mode."""
    speaker: str = ""
    at: datetime | None = None


class PeerDriver(Protocol):
    """A peer memory system behind one small interface."""

    name: str

    def add(self, items: Sequence[Item]) -> None:
        """Store a batch of items (the caller decides the batch: one session of turns)."""
        ...

    def search(
        self, user_id: str, query_text: str, query_vector: NDArray[np.float32] | None, k: int
    ) -> list[str]:
        """Return up to k item ids of this user's items, best first."""
        ...

    def close(self) -> None: ...


class DriverFactory(Protocol):
    def __call__(self, workdir: Path, embed: EmbedFn | None) -> PeerDriver: ...


class MissingVector(KeyError):
    """A cached-mode driver was asked for a text whose vector it was never given."""


class Vectors:
    """Vectors for a driver: precomputed ones (cached mode) or an embed function (live mode).

    Peers that embed internally (mem0, LangGraph) get `lookup` as their embedding function; in
    cached mode it returns the vector registered for each text by `items` or `query`.
    """

    def __init__(self, embed: EmbedFn | None) -> None:
        self.embed = embed
        self._known: dict[str, NDArray[np.float32]] = {}

    @property
    def live(self) -> bool:
        return self.embed is not None

    def use(self, embed: EmbedFn | None) -> None:
        """Switch mode: embed with `embed` (live) or look up given vectors (None, cached)."""
        self.embed = embed

    def forget(self) -> None:
        """Drop the vectors registered so far (they only serve the call that gave them)."""
        self._known.clear()

    def items(self, items: Sequence[Item]) -> NDArray[np.float32]:
        """The items' vectors, shape (n, DIM): embedded now (live) or stacked (cached)."""
        if self.embed is not None:
            return _as_matrix(self.embed([i.text for i in items]))
        vectors = _as_matrix(np.stack([_given(i.vector, i.id) for i in items]))
        self._remember((i.text for i in items), vectors)
        return vectors

    def query(self, text: str, vector: NDArray[np.float32] | None) -> NDArray[np.float32]:
        """The query's vector, shape (DIM,)."""
        if self.embed is not None:
            row: NDArray[np.float32] = _as_matrix(self.embed([text]))[0]
            return row
        out = _as_matrix(_given(vector, text)[None, :])
        self._remember([text], out)
        given: NDArray[np.float32] = out[0]
        return given

    def lookup(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed (live) or look up (cached) texts; for peers that call an embedding function."""
        if self.embed is not None:
            return _as_matrix(self.embed(list(texts)))
        missing = [t for t in texts if t not in self._known]
        if missing:
            raise MissingVector(f"no precomputed vector for {missing[0]!r}")
        return np.stack([self._known[t] for t in texts])

    def _remember(self, texts: Iterable[str], vectors: NDArray[np.float32]) -> None:
        for text, vector in zip(texts, vectors, strict=True):
            self._known[text] = vector
            self._known.setdefault(text.strip(), vector)  # mem0 strips queries before embedding


def _given(vector: NDArray[np.float32] | None, what: str) -> NDArray[np.float32]:
    if vector is None:
        raise MissingVector(f"cached mode needs a vector for {what!r}")
    return vector


def _as_matrix(vectors: NDArray[np.floating]) -> NDArray[np.float32]:
    out = np.asarray(vectors, dtype=np.float32)
    if out.ndim != 2 or out.shape[1] != DIM:
        raise ValueError(f"expected vectors of shape (n, {DIM}), got {out.shape}")
    return out

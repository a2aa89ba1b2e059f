"""Fakes for tests: a deterministic embedder and a frozen clock."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import numpy as np
from numpy.typing import NDArray

_WORD = re.compile(r"\w+")


class DeterministicEmbedder:
    """Bag-of-words vectors from hashed word stems: same text, same vector, in any process.

    Texts that share words are close and texts that share none are orthogonal-ish, which is
    enough to test ranking, filters and fusion without a model.
    """

    def __init__(self, dimension: int = 64, model_id: str = "deterministic") -> None:
        self._dimension = dimension
        self._model_id = model_id
        self.calls: list[int] = []

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.calls.append(len(texts))
        out = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                digest = hashlib.blake2b(_stem(word).encode(), digest_size=8).digest()
                slot = int.from_bytes(digest[:4], "little") % self._dimension
                out[row, slot] += 1.0 if digest[4] & 1 else -1.0
            norm = float(np.linalg.norm(out[row]))
            if norm == 0.0:
                out[row, 0] = 1.0
            else:
                out[row] /= norm
        return out


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


class FrozenClock:
    """A clock that only moves when told to."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

    def now(self) -> datetime:
        return self._now

    def advance(self, **delta: float) -> datetime:
        self._now += timedelta(**delta)
        return self._now

    def set(self, value: datetime) -> None:
        self._now = value

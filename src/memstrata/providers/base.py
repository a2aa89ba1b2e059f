"""Ports for the models memstrata talks to: embedders and chat models."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

Vector = NDArray[np.float32]
"""A 1-d float32 vector; embedders return rows of unit length."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors of a fixed dimension."""

    @property
    def model_id(self) -> str:
        """Stable name of the model, stored with the memory."""
        ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed a batch: returns an array of shape (len(texts), dimension), rows L2-normalised."""
        ...

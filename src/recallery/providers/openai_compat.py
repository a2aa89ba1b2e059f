"""Embeddings from any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, TEI, LM Studio)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from recallery.errors import ModelError
from recallery.extras import require
from recallery.settings import ProviderConfig


class OpenAIEmbedder:
    """Calls ``/embeddings``; the dimension is learned from the first reply."""

    def __init__(self, model: str, config: ProviderConfig, timeout: float = 30.0) -> None:
        self._model = model
        self._config = config
        self._timeout = timeout
        self._dimension: int | None = None
        self._client: Any = None

    @property
    def model_id(self) -> str:
        return self._model

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self.embed(["dimension probe"])
        assert self._dimension is not None
        return self._dimension

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        require("openai", extra="server", what="an OpenAI-compatible embedder")
        import openai

        if self._client is None:
            self._client = openai.OpenAI(
                base_url=self._config.base_url,
                api_key=self._config.api_key or "unused",
                timeout=self._timeout,
                max_retries=2,
            )
        try:
            reply = self._client.embeddings.create(model=self._model, input=list(texts))
        except openai.OpenAIError as exc:
            raise ModelError(f"embedding call to {self._config.base_url} failed: {exc}") from exc
        matrix = np.asarray([d.embedding for d in reply.data], dtype=np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix /= np.where(norms == 0, 1.0, norms)
        self._dimension = matrix.shape[1]
        return matrix

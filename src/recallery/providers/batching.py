"""Concurrent embedding calls joined into one model call.

An embedding model does one batch much faster than the same texts one call at a time (on two
cores, MiniLM embeds 8 turns in one call at ~3.8 ms a turn against ~5.9 ms alone), and a model
runs one call at a time anyway. So callers that arrive while the model is busy wait for it and
then go in together: the first of them runs one call for everyone waiting, up to
:data:`MAX_TEXTS` texts, and hands each caller its own rows. A caller that finds the model
idle runs at once, so a single sequential client waits for nobody.

Each row is the same vector the text gets on its own (the model embeds every text of a batch
independently; the tests check it), so batching never changes a result.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from recallery.observe import Observer
from recallery.providers.base import Embedder, QueryEmbedder

#: Texts one joined call may carry; callers beyond wait for the next call.
MAX_TEXTS = 64


@dataclass
class _Call:
    texts: Sequence[str]
    queued: float = field(default_factory=time.perf_counter)
    rows: NDArray[np.float32] | None = None
    error: BaseException | None = None
    done: bool = field(default=False)


class BatchingEmbedder:
    """An :class:`~recallery.providers.base.Embedder` that joins concurrent calls."""

    def __init__(self, inner: Embedder, max_texts: int = MAX_TEXTS) -> None:
        self.inner = inner
        self.max_texts = max_texts
        self._cond = threading.Condition()
        self._waiting: list[_Call] = []
        self._busy = False
        self.calls = 0
        """Model calls made (for tests and benchmarks: fewer than embed calls when joined)."""
        self.observer = Observer()
        """Told each model call's size and its callers' waits (the registry's, once built)."""

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        if not texts:
            return self.inner.embed(texts)
        mine = _Call(texts)
        with self._cond:
            self._waiting.append(mine)
        while True:  # the oldest calls go first: a capped batch may leave this one for later
            with self._cond:
                while not mine.done and self._busy:
                    self._cond.wait()
                if mine.done:
                    return _result(mine)
                self._busy = True
                batch = self._take()
            self._run(batch)

    def embed_query(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Search queries: the model's own query form where it has one (not joined with
        stored texts, which take the other form), else joined like any text."""
        if isinstance(self.inner, QueryEmbedder):
            return self.inner.embed_query(texts)
        return self.embed(texts)

    def _take(self) -> list[_Call]:
        """The waiting calls that fit one model call, oldest first (at least one)."""
        batch: list[_Call] = []
        count = 0
        while self._waiting and (
            not batch or count + len(self._waiting[0].texts) <= self.max_texts
        ):
            call = self._waiting.pop(0)
            batch.append(call)
            count += len(call.texts)
        return batch

    def _run(self, batch: list[_Call]) -> None:
        texts = [t for call in batch for t in call.texts]
        if self.observer.listeners:
            began = time.perf_counter()
            self.observer.batch(len(texts), [began - call.queued for call in batch])
        try:
            with self.observer.timed("model.embed"):
                vectors = self.inner.embed(texts)
            start = 0
            for call in batch:
                call.rows = vectors[start : start + len(call.texts)]
                start += len(call.texts)
        except BaseException as exc:  # every caller in the batch gets the model's own error
            for call in batch:
                call.error = exc
        finally:
            with self._cond:
                self.calls += 1
                for call in batch:
                    call.done = True
                self._busy = False
                self._cond.notify_all()


def _result(call: _Call) -> NDArray[np.float32]:
    if call.error is not None:
        raise call.error
    assert call.rows is not None
    return call.rows


__all__ = ["MAX_TEXTS", "BatchingEmbedder"]

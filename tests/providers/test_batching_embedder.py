"""Joined embedding calls return exactly what each caller would get alone, and join only when
callers really overlap."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from recallery.providers.batching import BatchingEmbedder
from recallery.testing import DeterministicEmbedder


class Gated:
    """An embedder whose first call blocks until the test opens the gate."""

    def __init__(self) -> None:
        self.inner = DeterministicEmbedder()
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.batches: list[list[str]] = []

    model_id = "gated"
    dimension = DeterministicEmbedder().dimension

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.batches.append(list(texts))
        if len(self.batches) == 1:
            self.entered.set()
            self.gate.wait(60)
        if any(t == "boom" for t in texts):
            raise RuntimeError("model failed")
        return self.inner.embed(texts)


def overlap(model: Gated, wrapper: BatchingEmbedder, requests: list[list[str]]) -> list[object]:
    """Run ``requests[0]`` first; once the model is busy with it, start the rest, wait until
    they all wait, then let the model go on."""
    results: list[object] = [None] * len(requests)

    def run(i: int) -> None:
        try:
            results[i] = wrapper.embed(requests[i])
        except RuntimeError as exc:
            results[i] = exc

    first = threading.Thread(target=run, args=(0,))
    first.start()
    assert model.entered.wait(60)
    others = [threading.Thread(target=run, args=(i,)) for i in range(1, len(requests))]
    for t in others:
        t.start()
    while True:
        with wrapper._cond:
            if len(wrapper._waiting) == len(requests) - 1:
                break
        time.sleep(0.001)  # let the callers take the lock and queue up
    model.gate.set()
    for t in [first, *others]:
        t.join(60)
    return results


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.lists(st.text(min_size=1, max_size=30), min_size=1, max_size=5), min_size=2, max_size=8
    )
)
def test_each_caller_gets_its_own_rows_exactly(requests: list[list[str]]) -> None:
    model = Gated()
    wrapper = BatchingEmbedder(model, max_texts=64)
    results = overlap(model, wrapper, requests)
    alone = DeterministicEmbedder()
    for texts, got in zip(requests, results, strict=True):
        assert isinstance(got, np.ndarray)
        assert np.array_equal(got, alone.embed(texts))
    assert len(model.batches) == 2  # the first call alone, then everyone who waited, together
    assert sorted(model.batches[1]) == sorted(t for r in requests[1:] for t in r)


def test_a_sequential_caller_waits_for_nobody() -> None:
    model = DeterministicEmbedder()
    wrapper = BatchingEmbedder(model)
    for i in range(5):
        assert np.array_equal(wrapper.embed([f"t{i}"]), model.embed([f"t{i}"]))
    assert wrapper.calls == 5


def test_a_joined_call_is_capped() -> None:
    """Whichever waiting caller runs the next call, every caller gets its rows, including
    one whose texts did not fit the call it ran for the older ones (run 20 times: which
    thread wakes first varies)."""
    for _ in range(20):
        model = Gated()
        wrapper = BatchingEmbedder(model, max_texts=4)
        requests = [["first"], ["a", "b"], ["c", "d"], ["e"], ["f", "g", "h"]]
        results = overlap(model, wrapper, requests)
        assert all(isinstance(r, np.ndarray) for r in results)
        assert all(len(b) <= 4 for b in model.batches)
        assert sorted(t for b in model.batches for t in b) == sorted(t for r in requests for t in r)


def test_a_failed_model_call_fails_every_caller_in_it_and_no_other() -> None:
    model = Gated()
    wrapper = BatchingEmbedder(model)
    results = overlap(model, wrapper, [["first"], ["boom"], ["fine"]])
    assert isinstance(results[0], np.ndarray)
    assert all(isinstance(r, RuntimeError) for r in results[1:])
    assert np.array_equal(wrapper.embed(["after"]), DeterministicEmbedder().embed(["after"]))


def test_empty_input_is_not_queued() -> None:
    wrapper = BatchingEmbedder(DeterministicEmbedder())
    assert wrapper.embed([]).shape[0] == 0
    assert wrapper.calls == 0 and not wrapper._waiting

"""Fixtures for extraction: a fake OpenAI-compatible server wired in as provider ``fake``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.support.extraction import CONFIG, build_engine, make_memory

from recallery import Engine, Memory, Principal
from recallery.jobs import Worker
from recallery.store.base import Store
from recallery.testing import DeterministicEmbedder, FakeLLM, FrozenClock


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


@pytest.fixture
def engine(
    store: Store, embedder: DeterministicEmbedder, clock: FrozenClock, llm: FakeLLM
) -> Iterator[Engine]:
    e = build_engine(store, embedder, clock, llm)
    yield e
    e.usage.close()


@pytest.fixture
def worker(engine: Engine) -> Worker:
    return Worker(engine, config=CONFIG, owner="worker-1")


@pytest.fixture
def mem(engine: Engine, alice: Principal) -> Memory:
    return make_memory(engine, alice)

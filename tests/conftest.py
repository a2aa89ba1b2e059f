"""Shared fixtures: an engine on a fresh store, the deterministic embedder, a frozen clock."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memstrata import Engine, Memory, Principal
from memstrata.providers.registry import ModelRegistry
from memstrata.store.base import Store
from memstrata.store.sqlite import SQLiteStore
from memstrata.testing import DeterministicEmbedder, FrozenClock


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock()


@pytest.fixture
def embedder() -> DeterministicEmbedder:
    return DeterministicEmbedder()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = SQLiteStore(tmp_path / "memstrata.db")
    yield s
    s.close()


@pytest.fixture
def engine(store: Store, embedder: DeterministicEmbedder, clock: FrozenClock) -> Iterator[Engine]:
    e = Engine(store, models=ModelRegistry(builtin=lambda: embedder), clock=clock)
    yield e
    e.usage.close()


@pytest.fixture
def alice(engine: Engine) -> Principal:
    return engine.principal(engine.create_user("alice").id)


@pytest.fixture
def bob(engine: Engine) -> Principal:
    return engine.principal(engine.create_user("bob").id)


@pytest.fixture
def memory(engine: Engine, alice: Principal) -> Memory:
    return engine.create_memory(
        alice,
        name="notes",
        memory_type=["raw"],
        embd_id="BAAI/bge-small-en-v1.5@Builtin",
        llm_id="glm-4-flash@ZHIPU-AI",
    )

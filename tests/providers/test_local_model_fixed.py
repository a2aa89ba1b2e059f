"""A memory keeps the local model it was created with: the name decides once, at creation
(``bge-m3`` and ``bge-large-zh`` read many languages, ``bge-small-en`` English), every write
and search of that memory uses it, and memories made before are fixed by a migration to the
model their name gave them then, on both stores."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from recallery import Engine, SearchRequest, TurnInput
from recallery.models import Memory
from recallery.providers.registry import ModelRegistry
from recallery.store.base import Store
from recallery.store.sqlite import SQLiteStore
from recallery.testing import DeterministicEmbedder, FrozenClock

E5 = "multilingual-e5-small"
MINILM = "all-MiniLM-L6-v2"


class Named(DeterministicEmbedder):
    """A deterministic embedder that counts the texts it embedded."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.texts += texts
        return super().embed(texts)


@pytest.fixture
def models() -> tuple[ModelRegistry, Named, Named]:
    minilm, e5 = Named(), Named()
    return ModelRegistry(builtin=lambda: minilm, e5=lambda: e5), minilm, e5


def _engine(store: Store, registry: ModelRegistry) -> Engine:
    return Engine(store, models=registry, clock=FrozenClock())


def test_each_memory_writes_and_searches_with_the_model_its_name_chose(
    sqlite_store: SQLiteStore, models: tuple[ModelRegistry, Named, Named]
) -> None:
    registry, minilm, e5 = models
    engine = _engine(sqlite_store, registry)
    owner = engine.principal(engine.create_user("owner").id)
    chinese = engine.create_memory(
        owner, name="zh", memory_type=["raw"], embd_id="BAAI/bge-m3@Builtin", llm_id="x@Y"
    )
    english = engine.create_memory(
        owner,
        name="en",
        memory_type=["raw"],
        embd_id="BAAI/bge-small-en-v1.5@Builtin",
        llm_id="x@Y",
    )
    assert (chinese.local_model, english.local_model) == (E5, MINILM)
    assert chinese.embd_id == "BAAI/bge-m3@Builtin"  # what the caller named is kept
    # three people, two scripts, in the memory that reads them
    turns = [
        TurnInput("我住在上海", user_id="wang"),
        TurnInput("Я живу в Казани", user_id="olga"),
        TurnInput("I live in Porto", user_id="ana"),
    ]
    added = engine.add_messages(owner, [chinese.id], turns)
    assert not engine.written_warnings(added)  # e5 reads them: no "English only" warning
    assert {t.content for t in turns} <= set(e5.texts)
    assert not set(minilm.texts) & {t.content for t in turns}
    engine.search(owner, SearchRequest("住在哪里", (chinese.id,)))
    assert "住在哪里" in e5.texts
    warned = engine.add_messages(owner, [english.id], [TurnInput("我住在北京", user_id="li")])
    assert "我住在北京" in minilm.texts
    assert "reads English only" in " ".join(engine.written_warnings(warned))
    engine.close()


def test_an_empty_memory_given_another_embd_id_takes_its_model(
    sqlite_store: SQLiteStore, models: tuple[ModelRegistry, Named, Named]
) -> None:
    registry, _, _ = models
    engine = _engine(sqlite_store, registry)
    owner = engine.principal(engine.create_user("owner").id)
    memory = engine.create_memory(
        owner, name="m", memory_type=["raw"], embd_id="all-MiniLM-L6-v2@Builtin", llm_id="x@Y"
    )
    changed = engine.update_memory(owner, memory.id, {"embd_id": "BAAI/bge-large-zh-v1.5@Builtin"})
    assert changed.local_model == E5
    engine.close()


LEGACY = {
    "BAAI/bge-m3@Builtin": MINILM,  # MiniLM answered every @Builtin name but e5's
    " intfloat/multilingual-e5-small@builtin ": E5,
    "multilingual-e5-small@Builtin": E5,
    "text-embedding-3-small@OpenAI": None,
}


def _seed(engine: Engine) -> dict[str, Memory]:
    owner = engine.principal(engine.create_user("owner").id)
    return {
        embd: engine.create_memory(
            owner, name=f"m{i}", memory_type=["raw"], embd_id="x@Builtin", llm_id="x@Y"
        )
        for i, embd in enumerate(LEGACY)
    }


def test_sqlite_memories_made_before_keep_the_model_their_name_gave_them(
    tmp_path: Path, models: tuple[ModelRegistry, Named, Named]
) -> None:
    registry, _, _ = models
    path = tmp_path / "db.sqlite"
    engine = _engine(SQLiteStore(path), registry)
    made = _seed(engine)
    engine.close()
    # the store as it was before migration 15: no column, the name alone deciding
    conn = sqlite3.connect(path)
    for embd, memory in made.items():
        conn.execute("UPDATE memories SET embd_id = ? WHERE id = ?", [embd, memory.id])
    conn.execute("ALTER TABLE memories DROP COLUMN local_model")
    conn.execute("DELETE FROM schema_migrations WHERE version = 15")
    conn.commit()
    conn.close()
    engine = _engine(SQLiteStore(path), registry)
    with engine.store.read() as r:
        got = {m.embd_id: m.local_model for m in r.memories([m.id for m in made.values()])}
    engine.close()
    assert got == LEGACY


@pytest.mark.postgres
def test_postgres_memories_made_before_keep_the_model_their_name_gave_them(
    postgres_dsn: str, models: tuple[ModelRegistry, Named, Named]
) -> None:
    from recallery.store.postgres import PostgresStore
    from recallery.testing.postgres import truncate_all

    registry, _, _ = models
    truncate_all(postgres_dsn)
    store = PostgresStore(postgres_dsn, pool_size=1)
    engine = _engine(store, registry)
    made = _seed(engine)
    with store.write() as w:
        for embd, memory in made.items():
            w.conn.execute("UPDATE memories SET embd_id = ? WHERE id = ?", [embd, memory.id])
        w.conn.execute("ALTER TABLE memories DROP COLUMN local_model")
        w.conn.execute("DELETE FROM schema_migrations WHERE version = 22")
    engine.close()
    store = PostgresStore(postgres_dsn, pool_size=1)
    try:
        with store.read() as r:
            got = {m.embd_id: m.local_model for m in r.memories([m.id for m in made.values()])}
    finally:
        store.close()
    assert got == LEGACY

"""Helpers for the keyword tests of one script or language: several people's turns written
into one raw memory through the engine, and which turn each query finds first on the keyword
side alone; on PostgreSQL, a keyword migration run again. Shared by the Arabic and the
unspaced-script and later Latin-language keyword tests, on both stores: each word found first
on SQLite, after an older keyword snapshot, and on PostgreSQL before and after its migration."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from pytest import MonkeyPatch

from recallery import Engine, Memory
from recallery.models import Scope
from recallery.providers.registry import ModelRegistry
from recallery.requests import TurnInput
from recallery.store.base import Store
from recallery.store.filters import EntryFilter
from recallery.store.sqlite import SQLiteStore, snapshots
from recallery.testing import DeterministicEmbedder, FrozenClock
from recallery.text.analyzer import analyze_all


def write(store: Store, turns: Sequence[tuple[str, str]]) -> tuple[list[int], Memory]:
    """``turns`` as (user, text) in one raw memory; their ids in order, and the memory."""
    embedder = DeterministicEmbedder()
    engine = Engine(store, models=ModelRegistry(builtin=lambda: embedder), clock=FrozenClock())
    owner = engine.principal(engine.create_user("owner").id)
    memory = engine.create_memory(
        owner, name="team", memory_type=["raw"], embd_id="x@Builtin", llm_id="x@Y"
    )
    ids = []
    for user, text in turns:
        (e,) = engine.add_messages(owner, [memory.id], [TurnInput(text, user_id=user)])
        ids.append(int(e.message_id))
    engine.usage.close()
    engine.request_recorder.close()
    return ids, memory


def firsts(store: Store, memory: Memory, queries: Iterable[str]) -> dict[str, int | None]:
    """The first keyword candidate of each query (None where nothing matches)."""
    out: dict[str, int | None] = {}
    with store.read() as r:
        for query in queries:
            found = r.keyword_candidates(Scope.of(memory.id), query, EntryFilter(), 3)
            out[query] = found[0][0] if found else None
    return out


def migrated_again(postgres_dsn: str, version: int) -> None:
    """On a PostgreSQL database: every row's keyword document is left as
    an older analyzer might have (the one term ``older``) and migration ``version`` is
    marked not run, so the next store opened runs it again."""
    from recallery.store.postgres import PostgresStore

    store = PostgresStore(postgres_dsn, pool_size=1)
    try:
        with store.write() as w:
            w.conn.execute("UPDATE entries SET fts = to_tsvector('simple', 'older')")
            w.conn.execute("DELETE FROM schema_migrations WHERE version = ?", [version])
    finally:
        store.close()


def documents(store: Store) -> dict[int, list[str]]:
    """Each PostgreSQL row's keyword terms, sorted."""
    with store.read() as r:
        rows = r.conn.execute("SELECT message_id, tsvector_to_array(fts) FROM entries")
    return {int(i): sorted(t) for i, t in rows}


def made(ids: Sequence[int], turns: Sequence[tuple[str, str]]) -> dict[int, list[str]]:
    """The terms today's analyzer makes of each turn, sorted, by id."""
    texts = [t for _, t in turns]
    return {i: sorted(set(a.terms)) for i, a in zip(ids, analyze_all(texts), strict=True)}


Turns = Sequence[tuple[str, str]]


def found_on_sqlite(path: Path, turns: Turns, found: Mapping[str, int]) -> None:
    """``turns`` written into a SQLite store at ``path``: each query of ``found`` finds the
    turn at its place first."""
    store = SQLiteStore(path)
    try:
        ids, memory = write(store, turns)
        assert firsts(store, memory, found) == {q: ids[i] for q, i in found.items()}
    finally:
        store.close()


def found_after_older_snapshots(
    path: Path, turns: Turns, found: Mapping[str, int], older: int, monkeypatch: MonkeyPatch
) -> None:
    """A SQLite store whose keyword snapshots were saved in the ``older`` format loads its
    rows once more, and each query of ``found`` then finds its turn first."""
    store = SQLiteStore(path)
    ids, memory = write(store, turns)
    with monkeypatch.context() as m:
        m.setattr(snapshots, "FORMATS", {**snapshots.FORMATS, "keywords": older})
        assert store.save_indexes() > 0
    store.close()
    restored = SQLiteStore(path)
    try:
        assert firsts(restored, memory, found) == {q: ids[i] for q, i in found.items()}
        assert restored._indexes.rows_loaded == len(turns)
    finally:
        restored.close()


def remade_by_migration(
    postgres_dsn: str, version: int, turns: Turns, found: Mapping[str, int], remade: set[int]
) -> None:
    """On PostgreSQL: each query of ``found`` finds its turn first; after migration
    ``version`` runs again over documents left as an older analyzer's, exactly the turns at
    the places ``remade`` have today's documents (the others are left as they were), and each
    query finds its turn first again."""
    from recallery.store.postgres import PostgresStore
    from recallery.testing.postgres import truncate_all

    truncate_all(postgres_dsn)
    store = PostgresStore(postgres_dsn, pool_size=1)
    ids, memory = write(store, turns)
    assert firsts(store, memory, found) == {q: ids[i] for q, i in found.items()}
    store.close()
    migrated_again(postgres_dsn, version)
    store = PostgresStore(postgres_dsn, pool_size=1)
    try:
        after, today = documents(store), made(ids, turns)
        assert after == {i: today[i] if n in remade else ["older"] for n, i in enumerate(ids)}
        assert firsts(store, memory, found) == {q: ids[i] for q, i in found.items()}
    finally:
        store.close()

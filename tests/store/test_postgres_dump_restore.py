"""The PostgreSQL backup docs/deployment.md prescribes, run: ``pg_dump`` of a live store,
``pg_restore`` into an empty database, and the restored store answers as the original."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from recallery import Engine, SearchRequest
from recallery.providers.registry import ModelRegistry
from recallery.testing import DeterministicEmbedder, FrozenClock

if TYPE_CHECKING:
    from recallery.testing.postgres import EmbeddedPostgres

pytestmark = pytest.mark.postgres


def _engine(dsn: str, embedder: DeterministicEmbedder, clock: FrozenClock) -> Engine:
    from recallery.store.postgres import PostgresStore

    return Engine(
        PostgresStore(dsn, pool_size=2), models=ModelRegistry(builtin=lambda: embedder), clock=clock
    )


def test_pg_dump_and_pg_restore_round_trip(
    postgres_server: EmbeddedPostgres, tmp_path: Path
) -> None:
    from recallery.testing.postgres import find_bin_dir

    embedder, clock = DeterministicEmbedder(), FrozenClock()
    source = postgres_server.create_database("dump_source")
    with _engine(source, embedder, clock) as engine:
        admin = engine.principal(engine.create_user("admin").id)
        memory = engine.create_memory(
            admin, name="m", memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z"
        )
        ids = [
            engine.add_turn(admin, [memory.id], user_input=f"heron {i}", agent_response="ok")[0]
            for i in range(12)
        ]
        erased = engine.erase(admin, memory.id, ids[4].message_id).erased
        query = SearchRequest("heron 9", (memory.id,), top_n=5)
        before = [(h.entry.message_id, round(h.score, 6)) for h in engine.search(admin, query)]
    dump, bin_dir = tmp_path / "recallery.dump", find_bin_dir()
    subprocess.run([bin_dir / "pg_dump", "--format=custom", f"--file={dump}", source], check=True)
    target = postgres_server.dsn_for("dump_target")
    subprocess.run(
        [bin_dir / "psql", postgres_server.dsn, "-qc", "CREATE DATABASE dump_target"], check=True
    )
    subprocess.run([bin_dir / "pg_restore", "--no-owner", f"--dbname={target}", dump], check=True)
    with _engine(target, embedder, clock) as restored:
        admin = restored.principal(admin.user_id)
        after = [(h.entry.message_id, round(h.score, 6)) for h in restored.search(admin, query)]
        assert after == before and after[0][0] == ids[9].message_id
        held = {e.message_id for e in restored.recent(admin, [memory.id], limit=50)}
        assert held == {e.message_id for e in ids} - set(erased)

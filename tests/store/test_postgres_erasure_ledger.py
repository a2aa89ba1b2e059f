"""PostgreSQL keeps an erasure ledger too, and ``recallery restore-erasures`` replays it
after ``pg_restore``: a dump taken before an erasure no longer brings the erased entry back,
and its id is never handed out again (issue 51, item 13; docs/deployment.md)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner
from tests.support.files import engine_in

from recallery.cli import main
from recallery.testing import FrozenClock

if TYPE_CHECKING:
    from recallery.testing.postgres import EmbeddedPostgres

pytestmark = pytest.mark.postgres


def _held(dsn: str, data: Path) -> set[int]:
    with engine_in(data, FrozenClock(), database_url=dsn) as engine, engine.store.read() as r:
        return {int(row[0]) for row in r.conn.execute("SELECT message_id FROM entries")}


def test_restore_erasures_replays_the_ledger_after_pg_restore(
    postgres_server: EmbeddedPostgres, tmp_path: Path
) -> None:
    from recallery.testing.postgres import find_bin_dir

    source, data = postgres_server.create_database("ledger_source"), tmp_path / "data"
    with engine_in(data, FrozenClock(), database_url=source) as engine:
        admin = engine.principal(engine.create_user("admin").id)
        memory = engine.create_memory(
            admin, name="m", memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z"
        )
        gone = engine.create_memory(
            admin, name="g", memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z"
        )

        def turn(memory_id: str, text: str, user: str) -> int:
            (entry,) = engine.add_turn(
                admin, [memory_id], user_input=text, agent_response="ok", user_id=user
            )
            return entry.message_id

        kept = [turn(memory.id, "我住在上海", "li"), turn(memory.id, "Я живу в Москве", "olga")]
        secret = turn(memory.id, "my PIN is kept in Zanzibar", "tom")
        in_gone = turn(gone.id, "a note in a memory deleted later", "tom")
        dump, bin_dir = tmp_path / "recallery.dump", find_bin_dir()
        subprocess.run([bin_dir / "pg_dump", "-Fc", f"--file={dump}", source], check=True)
        engine.erase(admin, memory.id, secret)
        engine.delete_memory(admin, gone.id)
    ledger = [json.loads(line) for line in (data / "erasures.jsonl").read_text().splitlines()]
    assert [r.get("ids", r.get("whole")) for r in ledger] == [[secret], True]  # ids, never text

    target = postgres_server.dsn_for("ledger_target")
    subprocess.run(
        [bin_dir / "psql", postgres_server.dsn, "-qc", "CREATE DATABASE ledger_target"], check=True
    )
    subprocess.run([bin_dir / "pg_restore", "--no-owner", f"--dbname={target}", dump], check=True)
    assert {secret, in_gone} <= _held(target, data)  # the dump brings them back

    env = {"RECALLERY_DATABASE_URL": target}
    done = CliRunner().invoke(main, ["restore-erasures", "--data-dir", str(data)], env=env)
    assert done.exit_code == 0, done.output
    report = json.loads(done.output)
    assert (report["entries_erased"], report["memories_deleted"]) == (1, 1)
    assert report["ids_reserved_through"] == secret and report["scrubbed"] is True
    assert _held(target, data) == set(kept)
    with engine_in(data, FrozenClock(), database_url=target) as engine:
        admin = engine.principal(admin.user_id)
        assert [m.id for m in engine.list_memories(admin).items] == [memory.id]
        with engine.store.read() as r:
            stones = r.tombstones(memory.id)
        assert [(t.message_id, t.actor) for t in stones] == [(secret, "restore")]
        (new,) = engine.add_turn(admin, [memory.id], user_input="new", agent_response="ok")
        assert new.message_id > in_gone  # erased ids are never handed out again

    again = CliRunner().invoke(main, ["restore-erasures", "--data-dir", str(data)], env=env)
    assert json.loads(again.output)["entries_erased"] == 0  # idempotent
    assert len((data / "erasures.jsonl").read_text().splitlines()) == 2  # nothing doubled
    (data / "erasures.jsonl").open("a").write('{"at": 1, "memory": ""}\n')
    bad = CliRunner().invoke(main, ["restore-erasures", "--data-dir", str(data)], env=env)
    assert bad.exit_code == 1 and "line 3 is not an erasure record" in bad.output

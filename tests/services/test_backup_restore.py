"""Backup and restore of the SQLite store: a consistent copy taken while writes go on, a
manifest that is checked, a restore that refuses a store in use, and erasures made after
the backup erased again from the ledger (``docs/deployment.md``, Backup and restore)."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

import pytest
from tests.support.files import engine_in

from recallery import Engine, SearchRequest
from recallery.errors import Conflict, InvalidInput, NotFound
from recallery.services import backup as backups
from recallery.settings import Settings
from recallery.testing import FrozenClock


def _ids(engine: Engine, memory_id: str) -> set[int]:
    """Every entry of the memory the store holds, in any state."""
    with engine.store.read() as r:
        rows = r.conn.execute("SELECT message_id FROM entries WHERE memory_id = ?", [memory_id])
    return {int(row[0]) for row in rows}


def _search(engine: Engine, memory_id: str, text: str) -> list[tuple[int, float]]:
    admin = engine.principal(engine.ensure_admin(None, create_key=False)[0].id)
    hits = engine.search(admin, SearchRequest(text, (memory_id,), top_n=5))
    return [(h.entry.message_id, round(h.score, 6)) for h in hits]


def test_round_trip_under_writes_keeps_acknowledged_turns_and_erasures(tmp_path: Path) -> None:
    clock = FrozenClock()
    live, copy, fresh = tmp_path / "live", tmp_path / "backup", tmp_path / "fresh"
    with engine_in(live, clock) as engine:
        admin = engine.principal(engine.ensure_admin(None, create_key=False)[0].id)
        memory = engine.create_memory(
            admin, name="m", memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z"
        )
        acked: list[int] = []
        for i in range(40):
            turn = engine.add_turn(
                admin, [memory.id], user_input=f"walrus {i}", agent_response="ok"
            )
            acked.append(turn[0].message_id)
        stop, during = threading.Event(), []

        def keep_writing() -> None:
            while not stop.is_set():
                turn = engine.add_turn(admin, [memory.id], user_input="otter", agent_response="ok")
                during.append(turn[0].message_id)

        writer = threading.Thread(target=keep_writing)
        writer.start()
        try:
            while len(during) < 3:  # the writer is going when the backup starts
                threading.Event().wait(0.001)
            before = list(during)
            manifest = backups.backup(Settings(data_dir=live), copy, clock.now())
        finally:
            stop.set()
            writer.join()
        assert len(during) > len(before)  # writes went on around the backup
        tops = {i: _search(engine, memory.id, f"walrus {i}")[0][0] for i in (3, 7, 21)}
        erased = engine.erase(admin, memory.id, acked[7]).erased
        late = engine.add_turn(admin, [memory.id], user_input="late walrus", agent_response="ok")
        engine.erase(admin, memory.id, late[0].message_id)

    assert manifest.counts["entries"] >= len(acked) + len(before)
    assert json.loads((copy / "manifest.json").read_text())["sha256"] == manifest.sha256
    report = backups.restore(
        Settings(data_dir=fresh), copy, clock.now(), ledgers=[live / "erasures.jsonl"]
    )
    assert (report.entries_erased, report.integrity) == (len(erased), "ok")

    with engine_in(fresh, clock) as restored:
        held = _ids(restored, memory.id)
        assert set(acked + before) - set(erased) <= held
        assert not set(erased) & held
        assert late[0].message_id not in held
        admin = restored.principal(restored.ensure_admin(None, create_key=False)[0].id)
        with pytest.raises(NotFound):
            restored.get_entry(admin, memory.id, acked[7])
        assert tops == {3: acked[3], 7: acked[7], 21: acked[21]}
        for i in (3, 21):  # searches answer as before; the erased turn is not found
            assert _search(restored, memory.id, f"walrus {i}")[0][0] == acked[i]
        assert acked[7] not in [hit for hit, _ in _search(restored, memory.id, "walrus 7")]
        new = restored.add_turn(admin, [memory.id], user_input="new", agent_response="ok")
        assert new[0].message_id > late[0].message_id  # erased ids are never handed out again
    conn = sqlite3.connect(fresh / "recallery.db")
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert (
        conn.execute("SELECT count(*) FROM entries WHERE content LIKE '%walrus 7%'").fetchone()[0]
        == 0
    )
    conn.close()


def test_restore_refuses_a_store_in_use_and_an_existing_one(tmp_path: Path) -> None:
    clock = FrozenClock()
    with engine_in(tmp_path / "live", clock):
        backups.backup(Settings(data_dir=tmp_path / "live"), tmp_path / "b", clock.now())
        with pytest.raises(Conflict, match="open in a running process"):
            backups.restore(Settings(data_dir=tmp_path / "live"), tmp_path / "b", clock.now())
    with pytest.raises(Conflict, match="--replace"):
        backups.restore(Settings(data_dir=tmp_path / "live"), tmp_path / "b", clock.now())
    report = backups.restore(
        Settings(data_dir=tmp_path / "live"), tmp_path / "b", clock.now(), replace=True
    )
    assert report.integrity == "ok"


def test_restore_in_place_erases_again_what_was_erased_after_the_backup(tmp_path: Path) -> None:
    clock, live = FrozenClock(), tmp_path / "live"
    with engine_in(live, clock) as engine:
        admin = engine.principal(engine.ensure_admin(None, create_key=False)[0].id)
        keep = engine.create_memory(
            admin, name="k", memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z"
        )
        gone = engine.create_memory(
            admin, name="g", memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z"
        )
        a = engine.add_turn(admin, [keep.id], user_input="a", agent_response="ok")[0].message_id
        b = engine.add_turn(admin, [keep.id], user_input="b", agent_response="ok")[0].message_id
        engine.add_turn(admin, [gone.id], user_input="c", agent_response="ok")
        backups.backup(Settings(data_dir=live), tmp_path / "b", clock.now())
        engine.erase(admin, keep.id, a)
        engine.delete_memory(admin, gone.id)
    report = backups.restore(Settings(data_dir=live), tmp_path / "b", clock.now(), replace=True)
    assert (report.entries_erased, report.memories_deleted) == (1, 1)
    with engine_in(live, clock) as engine:
        assert _ids(engine, keep.id) == {b}
        admin = engine.principal(engine.ensure_admin(None, create_key=False)[0].id)
        assert [m.id for m in engine.list_memories(admin).items] == [keep.id]


def test_a_changed_copy_or_manifest_is_refused(tmp_path: Path) -> None:
    clock = FrozenClock()
    with engine_in(tmp_path / "live", clock):
        backups.backup(Settings(data_dir=tmp_path / "live"), tmp_path / "b", clock.now())
    with (tmp_path / "b" / "recallery.db").open("ab") as f:
        f.write(b"\0")
    with pytest.raises(InvalidInput, match="sha256") as caught:
        backups.restore(Settings(data_dir=tmp_path / "fresh"), tmp_path / "b", clock.now())
    assert caught.value.field == "source"
    (tmp_path / "b" / "manifest.json").write_text("{}")
    with pytest.raises(InvalidInput, match="manifest"):
        backups.read_manifest(tmp_path / "b")
    with pytest.raises(Conflict, match="not empty"):
        backups.backup(Settings(data_dir=tmp_path / "live"), tmp_path / "b", clock.now())


def test_the_commands_back_up_and_restore(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from recallery.cli import main

    clock, live = FrozenClock(), tmp_path / "live"
    with engine_in(live, clock) as engine:
        admin = engine.principal(engine.ensure_admin(None, create_key=False)[0].id)
        memory = engine.create_memory(
            admin, name="m", memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z"
        )
        engine.add_turn(admin, [memory.id], user_input="hello", agent_response="ok")
        runner = CliRunner()
        taken = runner.invoke(main, ["backup", str(tmp_path / "b"), "--data-dir", str(live)])
        assert taken.exit_code == 0, taken.output
        assert json.loads(taken.output)["counts"]["entries"] == 1
        busy = runner.invoke(main, ["restore", str(tmp_path / "b"), "--data-dir", str(live)])
        assert busy.exit_code == 1
        assert "Conflict" in busy.output and "running process" in busy.output
    done = runner.invoke(
        main, ["restore", str(tmp_path / "b"), "--data-dir", str(tmp_path / "fresh")]
    )
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["integrity"] == "ok"

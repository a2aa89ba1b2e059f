"""The store, its WAL and shared memory, its ledger, backups and their directories are
created readable by their owner only (0600 files, 0700 directories), whatever the umask
lets other local users read (issue 51, item 12)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.files import engine_in, mode

from recallery.services import backup as backups
from recallery.settings import Settings
from recallery.testing import FrozenClock


@pytest.fixture(autouse=True)
def permissive_umask() -> Iterator[None]:
    """The usual 022: files would be 0644 and directories 0755 unless made owner-only."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def test_store_ledger_backup_and_restore_are_owner_only(tmp_path: Path) -> None:
    clock, live = FrozenClock(), tmp_path / "data"
    with engine_in(live, clock) as engine:
        admin = engine.principal(engine.ensure_admin(None, create_key=False)[0].id)
        memory = engine.create_memory(
            admin, name="m", memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z"
        )
        (turn,) = engine.add_turn(admin, [memory.id], user_input="Kyoto", agent_response="ok")
        engine.add_turn(admin, [memory.id], user_input="東京に住んでいます", agent_response="ok")
        engine.erase(admin, memory.id, turn.message_id)
        engine.add_turn(admin, [memory.id], user_input="Живу в Казани", agent_response="ok")
        assert mode(live) == 0o700
        for name in ("recallery.db", "recallery.db-wal", "recallery.db-shm", "erasures.jsonl"):
            assert mode(live / name) == 0o600, name
        backups.backup(Settings(data_dir=live), tmp_path / "backups" / "b1", clock.now())
    backup = tmp_path / "backups" / "b1"
    assert mode(backup) == 0o700
    assert {p.name: mode(p) for p in backup.iterdir()} == {
        "recallery.db": 0o600,
        "manifest.json": 0o600,
    }
    backups.restore(Settings(data_dir=tmp_path / "fresh"), backup, clock.now())
    assert mode(tmp_path / "fresh") == 0o700
    assert mode(tmp_path / "fresh" / "recallery.db") == 0o600

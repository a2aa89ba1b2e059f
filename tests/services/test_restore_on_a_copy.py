"""A restore works on a staging copy: the erasure ledgers are read and checked before anything
is touched, the copy is erased again, scrubbed and checked beside the store, and only then
replaces it. A failure at any step, or a crash, leaves the store exactly as it was, and the
text erased after the backup was taken never reaches the store's files (issue 51, item 1)."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.support.files import engine_in, live_files, traces

from recallery.cli import main
from recallery.errors import RecalleryError
from recallery.services import backup as backups
from recallery.settings import Settings
from recallery.store.sqlite import copies
from recallery.store.writer import Writer
from recallery.testing import FrozenClock

SECRET = "Zanzibar"


@dataclass(frozen=True)
class Scene:
    live: Path
    backup: Path
    kept: int
    erased: int


@pytest.fixture
def scene(tmp_path: Path) -> Scene:
    """A store whose backup holds a turn (``SECRET``) erased after the backup was taken, with
    turns in other scripts beside it; the store is closed."""
    clock, live = FrozenClock(), tmp_path / "live"
    with engine_in(live, clock) as engine:
        admin = engine.principal(engine.ensure_admin(None, create_key=False)[0].id)
        memory = engine.create_memory(
            admin, name="m", memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z"
        )

        def turn(text: str, user: str) -> int:
            entries = engine.add_turn(
                admin, [memory.id], user_input=text, agent_response="ok", user_id=user
            )
            return entries[0].message_id

        kept = turn("我住在上海", "li")
        turn("Я живу в Москве", "olga")
        erased = turn(f"my PIN is hidden in {SECRET}", "tom")
        backups.backup(Settings(data_dir=live), tmp_path / "b", clock.now())
        engine.erase(admin, memory.id, erased)
    assert not traces(live_files(live / "recallery.db"), SECRET)
    return Scene(live, tmp_path / "b", kept, erased)


def _state(live: Path) -> dict[str, str]:
    """Every file of the data directory and its sha256."""
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in live.iterdir() if p.is_file()
    }


def _restore(live: Path, backup: Path, *args: str) -> tuple[int, str, BaseException | None]:
    result = CliRunner().invoke(
        main, ["restore", str(backup), "--data-dir", str(live), "--replace", *args]
    )
    return result.exit_code, result.output, result.exception


def test_a_mistyped_ledger_path_is_refused_before_the_store_is_touched(
    scene: Scene, tmp_path: Path
) -> None:
    before = _state(scene.live)
    missing = tmp_path / "lost" / "erasure.jsonl"
    code, output, _ = _restore(scene.live, scene.backup, "--erasures", str(missing))
    assert code == 1 and f"no ledger at {missing}" in output
    assert _state(scene.live) == before
    assert not traces(live_files(scene.live / "recallery.db"), SECRET)


@pytest.mark.parametrize("own", [True, False], ids=["own-ledger", "other-ledger"])
def test_a_ledger_with_a_bad_line_is_a_clean_error_naming_the_file_and_line(
    scene: Scene, tmp_path: Path, own: bool
) -> None:
    if own:
        ledger, args = scene.live / "erasures.jsonl", ()
        with ledger.open("a") as f:
            f.write('{"at": 1.0, "memory": "m", "ids": ["seven"]}\n')
        line = len(ledger.read_text().splitlines())
    else:
        ledger = tmp_path / "other.jsonl"
        ledger.write_text('{"at":1.0,"memory":"m","ids":[1]}\nnot json at all\n{"at":2}\n')
        args, line = ("--erasures", str(ledger)), 2
    before = _state(scene.live)
    code, output, raised = _restore(scene.live, scene.backup, *args)
    assert code == 1 and isinstance(raised, SystemExit)  # no traceback: a message
    assert f"{ledger} line {line} is not an erasure record" in output
    assert "Traceback" not in output
    assert _state(scene.live) == before


def _fail_in_replay(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: Writer, *args: object) -> None:
        raise RecalleryError("disk gone while erasing again")

    monkeypatch.setattr(Writer, "add_tombstones", broken)


def _fail_after(name: str) -> Callable[[pytest.MonkeyPatch], None]:
    def inject(monkeypatch: pytest.MonkeyPatch) -> None:
        step = getattr(copies, name)

        def then_fail(*args: object) -> object:
            step(*args)
            raise RecalleryError(f"failed after {name}")

        monkeypatch.setattr(copies, name, then_fail)

    return inject


def _fail_at_rename(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_rename(src: object, dst: object) -> None:
        raise OSError("rename refused")

    monkeypatch.setattr(copies.os, "replace", no_rename)


@pytest.mark.parametrize(
    "inject",
    [_fail_in_replay, _fail_after("stage"), _fail_after("seal"), _fail_at_rename],
    ids=["replay", "after-staging", "after-sealing", "rename"],
)
def test_a_failure_at_any_step_leaves_the_target_as_it_was(
    scene: Scene, monkeypatch: pytest.MonkeyPatch, inject: Callable[[pytest.MonkeyPatch], None]
) -> None:
    before = _state(scene.live)
    inject(monkeypatch)
    with pytest.raises((RecalleryError, OSError)):
        backups.restore(
            Settings(data_dir=scene.live), scene.backup, FrozenClock().now(), replace=True
        )
    assert _state(scene.live) == before  # the staging copy is gone too
    assert not traces(live_files(scene.live / "recallery.db"), SECRET)


def test_a_crash_before_the_swap_leaves_the_target_and_the_next_restore_completes(
    scene: Scene,
) -> None:
    before = _state(scene.live)
    crash = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from recallery.services import backup\n"
        "from recallery.settings import Settings\n"
        "from recallery.store.sqlite import copies\n"
        "from recallery.testing import FrozenClock\n"
        "copies.swap_in = lambda staging, target: os._exit(9)\n"
        "backup.restore(Settings(data_dir=Path(sys.argv[1])), Path(sys.argv[2]),"
        " FrozenClock().now(), replace=True)\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", crash, str(scene.live), str(scene.backup)], check=False
    )
    assert ran.returncode == 9
    left = _state(scene.live)
    assert {k: v for k, v in left.items() if k in before} == before
    assert set(left) - set(before) == {"recallery.db.restoring"}  # sealed, erased again
    assert not traces(live_files(scene.live / "recallery.db"), SECRET)
    assert not traces([scene.live / "recallery.db.restoring"], SECRET)

    code, output, _ = _restore(scene.live, scene.backup)
    assert code == 0, output
    assert set(_state(scene.live)) == set(before)  # the staging file left is cleared
    assert not traces(live_files(scene.live / "recallery.db"), SECRET)
    with engine_in(scene.live, FrozenClock()) as engine:
        with engine.store.read() as r:
            held = {int(row[0]) for row in r.conn.execute("SELECT message_id FROM entries")}
        assert scene.kept in held and scene.erased not in held


def test_a_reader_of_the_target_stops_the_swap_and_keeps_its_wal(scene: Scene) -> None:
    """The target's WAL is folded in before it is removed: a connection reading it (an
    ``sqlite3`` shell) makes the restore refuse rather than drop committed pages."""
    import sqlite3

    db = scene.live / "recallery.db"
    shell = sqlite3.connect(db, isolation_level=None)
    try:
        shell.execute("PRAGMA journal_mode = WAL")
        shell.execute("CREATE TABLE notes (x)")  # a committed page in the WAL
        shell.execute("BEGIN")
        shell.execute("SELECT count(*) FROM notes").fetchone()
        code, output, _ = _restore(scene.live, scene.backup)
        assert code == 1 and "open in another connection" in output
        shell.execute("COMMIT")
        assert shell.execute("SELECT count(*) FROM notes").fetchone() == (0,)
    finally:
        shell.close()
    assert not traces(live_files(db), SECRET)

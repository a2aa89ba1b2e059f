"""A scrub beside an open reader: an erasure never waits for a reader (a worker, a long
backup, an ``sqlite3`` shell) nor stalls other writers; the scrub it cannot finish stays due
and completes at the next opportunity (a later write, ``scrub()``, ``close()``, the next
process to open the store), after which no file of the store holds the erased text
(issue 51, item 2; docs/security.md)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from tests.support.files import live_files, traces

from recallery import Engine, Memory, Principal
from recallery.models import AuditAction
from recallery.policies.eviction import delete_with_tombstones
from recallery.providers.registry import ModelRegistry
from recallery.store.erasures import ErasureLedger
from recallery.store.sqlite import SQLiteStore
from recallery.testing import DeterministicEmbedder, FrozenClock

#: The stores here wait this long for a lock; an erasure beside a reader must return well
#: within it (the old scrub waited it out, holding the write lock).
BUSY_MS = 3_000
SECRET = "Zanzibar"


@contextmanager
def opened(path: Path) -> Iterator[Engine]:
    store = SQLiteStore(path, busy_timeout_ms=BUSY_MS, erasures=ErasureLedger(path.parent / "e"))
    embedder = DeterministicEmbedder()
    with Engine(store, models=ModelRegistry(builtin=lambda: embedder), clock=FrozenClock()) as e:
        yield e


def _seeded(engine: Engine) -> tuple[Principal, Memory, int]:
    admin = engine.principal(engine.create_user("admin").id)
    memory = engine.create_memory(
        admin, name="m", memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z"
    )
    for text, user in (("我住在上海", "li"), ("Я живу в Москве", "olga")):
        engine.add_turn(admin, [memory.id], user_input=text, agent_response="ok", user_id=user)
    (secret,) = engine.add_turn(
        admin, [memory.id], user_input=f"my PIN is kept in {SECRET}", agent_response="ok"
    )
    return admin, memory, secret.message_id


@contextmanager
def reading(path: Path) -> Iterator[sqlite3.Connection]:
    """Another connection with a read transaction open on the store's current snapshot."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("BEGIN")
        conn.execute("SELECT count(*) FROM entries").fetchone()
        yield conn
    finally:
        conn.close()


def test_an_erasure_beside_a_reader_returns_at_once_and_scrubs_at_the_next_write(
    tmp_path: Path,
) -> None:
    path = tmp_path / "recallery.db"
    with opened(path) as engine:
        admin, memory, secret = _seeded(engine)
        with reading(path) as reader:
            started = time.monotonic()
            receipt = engine.erase(admin, memory.id, secret)
            assert time.monotonic() - started < BUSY_MS / 1000 / 3
            assert receipt.erased == (secret,)
            assert traces(live_files(path), SECRET)  # the reader still needs those pages
            assert engine.store.scrub() is False  # due, and said so
            assert (tmp_path / "recallery.db.scrub").exists()
            other = sqlite3.connect(path, timeout=0.2)  # writers are not stalled
            other.execute("CREATE TABLE notes (x)")
            other.commit()
            other.close()
            started = time.monotonic()
            engine.add_turn(admin, [memory.id], user_input="still writing", agent_response="ok")
            assert time.monotonic() - started < BUSY_MS / 1000 / 3
            reader.execute("COMMIT")
        engine.add_turn(admin, [memory.id], user_input="next write", agent_response="ok")
        assert not traces(live_files(path), SECRET)  # the write was the opportunity
        assert not (tmp_path / "recallery.db.scrub").exists()
        assert engine.store.scrub() is True


def test_a_scrub_still_due_at_close_is_completed_by_the_next_process(tmp_path: Path) -> None:
    path = tmp_path / "recallery.db"
    with opened(path) as engine:
        admin, memory, secret = _seeded(engine)
        reader = sqlite3.connect(path, isolation_level=None)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM entries").fetchone()
        engine.erase(admin, memory.id, secret)
    assert traces(live_files(path), SECRET)  # close could not scrub past the reader
    assert (tmp_path / "recallery.db.scrub").exists()
    reader.close()
    with opened(path) as engine:  # opening is an opportunity too
        assert not traces(live_files(path), SECRET)
        assert not (tmp_path / "recallery.db.scrub").exists()
        assert engine.store.scrub() is True


@pytest.mark.parametrize("how", ["entries", "memory"])
def test_the_store_scrubs_after_a_transaction_that_erases_without_being_asked(
    tmp_path: Path, how: str
) -> None:
    """No caller has to remember ``scrub()``: the commit of an erasure is followed by it."""
    path = tmp_path / "recallery.db"
    with opened(path) as engine:
        _, memory, secret = _seeded(engine)
        store = engine.store
        assert traces(live_files(path), SECRET)  # in the WAL, before any erasure
        with store.write() as w:
            if how == "memory":
                w.delete_memory(memory.id)
            else:
                delete_with_tombstones(
                    w, memory.id, [secret], FrozenClock().now(), "t", "r", AuditAction.ENTRY_ERASE
                )
        assert not traces(live_files(path), SECRET)
        assert store.scrub() is True  # nothing due: cheap, and says the files are clean

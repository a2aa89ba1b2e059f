"""Every erasure path leaves no trace of the erased text in the store's files: one entry, a bulk
change, everything about a user (in the caller's memories, and an administrator's request over
every tenant), and a whole memory. The store scrubs after any transaction that erased, so no
path relies on its caller remembering to; each path is checked by reading the files."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

import pytest
from tests.support.engine import turn

from recallery import Engine, Memory, Principal
from recallery.wire.subjects import SCRUB_DUE, receipt_lines

SECRET = "Quetzal-8841 是玛丽亚的储物柜密码"
KEEP = "Tom keeps his bike at Gate 9"

Erase = Callable[[Engine, Principal, Memory, int], object]


def _one(engine: Engine, actor: Principal, memory: Memory, message_id: int) -> object:
    return engine.erase(actor, memory.id, message_id, reason="asked")


def _bulk(engine: Engine, actor: Principal, memory: Memory, message_id: int) -> object:
    return engine.bulk(actor, memory.id, "erase", message_ids=[message_id], dry_run=False)


def _person(engine: Engine, actor: Principal, memory: Memory, message_id: int) -> object:
    return engine.erase_subject(actor, "maria", dry_run=False)


def _operator(engine: Engine, actor: Principal, memory: Memory, message_id: int) -> object:
    admin, _ = engine.ensure_admin()
    return engine.erase_subject(engine.principal(admin.id), "maria", dry_run=False, everywhere=True)


def _memory(engine: Engine, actor: Principal, memory: Memory, message_id: int) -> object:
    engine.delete_memory(actor, memory.id)
    return None


@pytest.mark.parametrize("erase", [_one, _bulk, _person, _operator, _memory])
def test_no_erasure_path_leaves_the_text_in_the_files(
    engine: Engine, alice: Principal, erase: Erase
) -> None:
    memory = engine.create_memory(
        alice, name="support", memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z"
    )
    other = engine.create_memory(
        alice, name="other", memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z"
    )
    secret = turn(engine, alice, memory, SECRET, user_id="maria")
    turn(engine, alice, other, KEEP, user_id="tom")
    engine.usage.flush()
    files = engine.store.files()
    if not files:
        pytest.skip("this store keeps no local files to read")
    assert any(SECRET.encode() in f.read_bytes() for f in engine.store.files())
    erase(engine, alice, memory, secret.message_id)
    engine.usage.flush()
    for file in engine.store.files():
        data = file.read_bytes()
        assert SECRET.encode() not in data and b"Quetzal-8841" not in data, file.name
    assert KEEP.encode() in b"".join(f.read_bytes() for f in engine.store.files())


def test_a_receipt_says_when_a_reader_keeps_the_files_from_being_scrubbed(
    engine: Engine, alice: Principal
) -> None:
    path = getattr(engine.store, "path", None)
    if path is None:
        pytest.skip("this store keeps no local files to read")
    memory = engine.create_memory(
        alice, name="support", memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z"
    )
    secret = turn(engine, alice, memory, SECRET, user_id="maria")
    turn(engine, alice, memory, KEEP, user_id="tom")
    engine.usage.flush()
    reader = sqlite3.connect(path)
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM entries").fetchone()  # holds a snapshot
        receipt = engine.erase_subject(alice, "maria", dry_run=False)
        assert receipt.count == 1 and not receipt.scrubbed
        assert any(SCRUB_DUE in line for line in receipt_lines(receipt))
    finally:
        reader.close()
    assert engine.store.scrub()  # the next chance completes it
    for file in engine.store.files():
        assert SECRET.encode() not in file.read_bytes(), file.name
    assert engine.erase(alice, memory.id, secret.message_id + 1).scrubbed

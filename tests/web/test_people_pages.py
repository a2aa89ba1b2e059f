"""The people pages without a browser: a user's page counts what the viewer may read, and
forgetting or erasing everything about them shows the dry run's receipt before it changes
anything; a viewer whose key may not change a memory leaves it untouched."""

from __future__ import annotations

from fastapi.testclient import TestClient
from tests.support.web import Login, form_token

from recallery import Engine, Memory, Principal
from recallery.models import Scope
from recallery.store.filters import EntryFilter


def _seed(engine: Engine, alice: Principal, notes: Memory) -> None:
    for user, text in (("tom", "Tom's cat is Miso"), ("ann", "Ann's dog is Rex")):
        engine.add_turn(alice, [notes.id], user_input=text, agent_response="ok", user_id=user)


def _users(engine: Engine, notes: Memory) -> list[str]:
    with engine.store.read() as r:
        found, _ = r.entries(Scope.of(notes.id), EntryFilter(current_only=False), limit=10)
    return sorted(e.user_id for e in found)


def test_erase_everything_about_a_user_from_their_page(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    _seed(engine, alice, notes)
    c: TestClient = login(alice_key)
    listed = c.get("/people")
    assert 'href="/people/user?id=tom"' in listed.text
    page = c.get("/people/user?id=tom")
    assert page.status_code == 200 and 'id="erase-everything"' in page.text
    assert "1 entry in 1 memory" in page.text
    preview = c.get("/people/user/erase?id=tom")
    assert "Would erase" in preview.text and "<strong>1</strong> entry" in preview.text
    assert _users(engine, notes) == ["ann", "tom"]  # the dry run changed nothing
    token = form_token(preview.text)
    unconfirmed = c.post("/people/user/erase?id=tom", data={"csrf": token, "reason": "asked"})
    assert unconfirmed.status_code == 400 and "Type tom to confirm" in unconfirmed.text
    assert _users(engine, notes) == ["ann", "tom"]
    done = c.post(
        "/people/user/erase?id=tom", data={"csrf": token, "confirm": "tom", "reason": "x"}
    )
    assert done.status_code == 303  # so reloading the receipt does not post again
    assert _users(engine, notes) == ["ann"]
    for _ in range(2):  # the receipt, then the same on reload: what was erased, nothing more
        receipt = c.get(done.headers["location"])
        assert receipt.status_code == 200 and "Erased" in receipt.text
        assert "<strong>1</strong> entry" in receipt.text
    erasures = engine.audit_log(alice, memory_id=notes.id, action="entry.erase").items
    assert len(erasures) == 1


def test_a_read_only_session_changes_nothing(
    login: Login, engine: Engine, alice: Principal, notes: Memory
) -> None:
    _seed(engine, alice, notes)
    _, key = engine.create_api_key(alice, alice.user_id, capabilities=["read"])
    c = login(key)
    preview = c.get("/people/user/forget?id=tom")
    assert "Nothing to forget" in preview.text and "lacks the" in preview.text
    token = form_token(preview.text)
    c.post("/people/user/forget?id=tom", data={"csrf": token})
    with engine.store.read() as r:
        forgotten = r.entry_ids(Scope.of(notes.id), EntryFilter(forgotten_only=True))
    assert forgotten == []

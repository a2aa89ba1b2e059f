"""Versions in the web UI (issue 40 item 5): a retired version's page offers to reinstate
it, asking for a reason; the answer, the stored state and the audit event; a key without
``manage`` is refused beside the form, and nothing changes."""

from __future__ import annotations

from tests.support.web import Login, form_token

from recallery import Engine, Memory, Principal


def _corrected(engine: Engine, alice: Principal, notes: Memory) -> tuple[int, int]:
    (raw,) = engine.add_turn(alice, [notes.id], user_input="office in Paris", agent_response="ok")
    new = engine.correct(alice, notes.id, raw.message_id, "office in Lyon", reason="moved")
    return raw.message_id, new.message_id


def test_reinstate_a_retired_version_from_its_page(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    old, new = _corrected(engine, alice, notes)
    browser = login(alice_key)
    current = browser.get(f"/memories/{notes.id}/entries/{new}")
    assert f'/entries/{old}#reinstate">reinstate' in current.text
    assert f"/entries/{new}/reinstate" not in current.text  # the current one has nothing to undo
    html = browser.get(f"/memories/{notes.id}/entries/{old}").text
    assert f'action="/memories/{notes.id}/entries/{old}/reinstate"' in html
    url = f"/memories/{notes.id}/entries/{old}/reinstate"

    empty = browser.post(url, data={"csrf": form_token(html), "reason": " "})
    assert empty.status_code == 400 and "reason cannot be empty" in empty.text
    done = browser.post(url, data={"csrf": form_token(html), "reason": "Lyon was wrong"})

    assert done.status_code == 303 and done.headers["location"].endswith(f"/entries/{old}")
    shown = browser.get(done.headers["location"]).text
    assert "is the current version again" in shown and "Reinstate this version" not in shown
    assert engine.get_entry(alice, notes.id, new)[0].retired_at is not None
    events = engine.audit_log(alice, memory_id=notes.id, action="entry.reinstate").items
    assert [(e.message_id, e.reason) for e in events] == [(old, "Lyon was wrong")]


def test_reinstate_refused_beside_the_form_for_a_key_without_manage(
    login: Login, engine: Engine, alice: Principal, notes: Memory
) -> None:
    old, new = _corrected(engine, alice, notes)
    _, key = engine.create_api_key(alice, alice.user_id, capabilities=["read", "write"])
    browser = login(key)
    html = browser.get(f"/memories/{notes.id}/entries/{old}").text
    url = f"/memories/{notes.id}/entries/{old}/reinstate"
    refused = browser.post(url, data={"csrf": form_token(html), "reason": "wrong"})
    assert refused.status_code == 400
    assert 'class="field-error" role="alert">the API key lacks the' in refused.text
    assert engine.get_entry(alice, notes.id, new)[0].retired_at is None

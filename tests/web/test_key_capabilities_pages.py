"""What a key may do, without a browser: keys are created with chosen capabilities (account and
users pages) and every key list shows them; a session whose key lacks a capability sees the
controls that need it disabled, with the reason; a refused form lands on a page that keeps the
site's navigation."""

from __future__ import annotations

import re

from tests.support.web import Login, form_token

from recallery import Engine, Memory, Principal

NAV = '<nav aria-label="main">'


def _button(html: str, label: str) -> str:
    """The opening tag of the button whose text is ``label``."""
    found = re.search(r"<button[^>]*>" + re.escape(label) + "</button>", html)
    assert found, f"no {label} button"
    return found.group(0)


def test_a_key_is_created_with_the_capabilities_ticked(
    login: Login, alice_key: str, engine: Engine, alice: Principal
) -> None:
    c = login(alice_key)
    token = form_token(c.get("/account").text)
    made = c.post(
        "/account/keys",
        data={"csrf": token, "name": "reader", "capabilities_chosen": "1", "capability": "read"},
    )
    assert made.status_code == 200 and 'id="new-key"' in made.text
    keys = {k.name: k for k in engine.list_api_keys(alice, alice.user_id)}
    assert keys["reader"].capabilities == ("read",)
    assert keys["alice"].capabilities is None  # the seed key: every capability
    rows = {
        name: row
        for row in re.findall(r"<tr[ >].*?</tr>", made.text, re.S)
        for name in ("reader", "alice")
        if f"<td>{name}</td>" in row
    }
    assert "cap-read" in rows["reader"] and "cap-write" not in rows["reader"]
    assert "cap-manage" not in rows["reader"]
    assert all(f"cap-{c}" in rows["alice"] for c in ("read", "write", "manage"))


def test_a_new_key_is_a_field_to_select_with_a_copy_button_for_script(
    login: Login, alice_key: str, engine: Engine, alice: Principal
) -> None:
    """Without script the key is a read-only field (select it, copy it); the Copy button is
    hidden until app.js wires it (issue 54 item 5). The same on the users page."""
    root = engine.principal(engine.create_user("root", admin=True).id)
    _, root_key = engine.create_api_key(root, root.user_id, name="root")
    for browser, action in ((login(alice_key), "/account/keys"), (login(root_key), None)):
        at = "/account" if action else "/users"
        action = action or f"/users/{alice.user_id}/keys"
        token = form_token(browser.get(at).text)
        made = browser.post(action, data={"csrf": token, "name": "агент"})
        assert made.status_code == 200
        field = re.search(r'<input type="text" id="new-key" value="(rc-[^"]+)" readonly', made.text)
        assert field, "no read-only field holding the key"
        assert engine.authenticate(field.group(1)).user_id == alice.user_id  # the real key
        assert '<button type="button" class="small" data-copy="new-key" hidden>Copy</button>' in (
            made.text
        )
        assert 'id="new-key-copied" role="status"' in made.text  # where "Copied." is said


def test_a_key_with_no_capability_ticked_is_refused_naming_the_field(
    login: Login, alice_key: str, engine: Engine, alice: Principal
) -> None:
    c = login(alice_key)
    token = form_token(c.get("/account").text)
    refused = c.post(
        "/account/keys", data={"csrf": token, "name": "none", "capabilities_chosen": "1"}
    )
    assert refused.status_code == 400 and "capabilities: no capability given" in refused.text
    assert NAV in refused.text
    assert [k.name for k in engine.list_api_keys(alice, alice.user_id)] == ["alice"]


def test_an_admin_creates_a_users_key_with_chosen_capabilities(
    login: Login, engine: Engine
) -> None:
    root = engine.principal(engine.create_user("root", admin=True).id)
    _, key = engine.create_api_key(root, root.user_id)
    tom = engine.create_user("tom")
    c = login(key)
    token = form_token(c.get("/users").text)
    data = {"csrf": token, "name": "tom's", "capabilities_chosen": "1"}
    made = c.post(f"/users/{tom.id}/keys", data={**data, "capability": ["read", "write"]})
    assert made.status_code == 200 and "New API key for tom" in made.text
    (listed,) = engine.list_api_keys(root, tom.id)
    assert listed.capabilities == ("read", "write")


def test_a_read_only_session_sees_write_and_manage_controls_disabled(
    login: Login, engine: Engine, alice: Principal, notes: Memory
) -> None:
    engine.add_turn(alice, [notes.id], user_input="my cat is Miso", agent_response="noted")
    _, key = engine.create_api_key(alice, alice.user_id, capabilities=["read"])
    c = login(key)
    messages = c.get(f"/memories/{notes.id}/messages").text
    forget = _button(messages, "Forget")
    assert "disabled" in forget and "lacks the 'write' capability" in forget
    assert 'id="key-limits"' in messages and "read-only key" in messages
    account = c.get("/account").text  # keys are the manage capability's: hidden, with why
    assert "lacks the &#39;manage&#39; capability (to list keys)" in account
    assert "Create key" not in account
    # an unrestricted session's controls stay live
    _, full = engine.create_api_key(alice, alice.user_id)
    live = login(full).get(f"/memories/{notes.id}/messages").text
    assert "disabled" not in _button(live, "Forget") and 'id="key-limits"' not in live


def test_a_key_without_manage_may_write_but_not_review(
    login: Login, engine: Engine, alice: Principal, notes: Memory
) -> None:
    _, key = engine.create_api_key(alice, alice.user_id, capabilities=["read", "write"])
    c = login(key)
    review = c.get(f"/memories/{notes.id}/review").text
    assert "key without manage" in review
    confirm = _button(review, "Confirm ticked")
    assert "disabled" in confirm and "'manage'" in confirm


def test_a_refused_form_lands_on_a_page_with_the_navigation(
    login: Login, engine: Engine, alice: Principal, notes: Memory
) -> None:
    engine.add_turn(alice, [notes.id], user_input="my cat is Miso", agent_response="noted")
    (turn,) = engine.list_messages(alice, notes.id).items
    _, key = engine.create_api_key(alice, alice.user_id, capabilities=["read"])
    c = login(key)
    token = form_token(c.get(f"/memories/{notes.id}/messages").text)
    refused = c.post(f"/memories/{notes.id}/entries/{turn.message_id}/forget", data={"csrf": token})
    assert refused.status_code == 403 and "lacks the &#39;write&#39; capability" in refused.text
    assert NAV in refused.text and 'href="/account"' in refused.text
    assert engine.list_messages(alice, notes.id).items[0].forget_at is None


def test_a_key_names_its_memories_and_one_whose_memories_were_deleted_reaches_nothing(
    login: Login, alice_key: str, engine: Engine, alice: Principal, bob: Principal
) -> None:
    """Before: "1 memory · live" for a key scoped to a memory deleted since (issue 54 item 5).
    Such a key is not revoked (it still logs in), but it reaches nothing, and says so."""
    kept, doomed, other = (
        engine.create_memory(alice, name=n, memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z")
        for n in ("заметки", "笔记", "spare")
    )
    both, _ = engine.create_api_key(alice, alice.user_id, name="both", scope=[kept.id, doomed.id])
    only, stale = engine.create_api_key(alice, alice.user_id, name="only", scope=[doomed.id])
    engine.create_api_key(alice, alice.user_id, name="wide", scope=[other.id])
    engine.delete_memory(alice, doomed.id)
    engine.create_api_key(bob, bob.user_id, name="bob-key")

    page = login(alice_key).get("/account").text
    rows = dict(re.findall(r'<tr id="key-(\w+)">(.*?)</tr>', page, re.S))
    named = f'<a href="/memories/{kept.id}" title="memory {kept.id}">заметки</a>'
    assert named in rows[both] and "1 deleted memory" in rows[both]
    assert ">live</span>" in rows[both]  # it still reaches заметки
    assert '<td class="key-scope"><span class="muted">1 deleted memory</span></td>' in rows[only]
    assert ">reaches nothing</span>" in rows[only] and ">live</span>" not in rows[only]
    assert "笔记" not in page and "bob-key" not in page  # deleted; another user's key
    assert "Revoke" in rows[only]  # the way to finish it

    assert engine.authenticate(stale).scope == frozenset({doomed.id})  # not revoked in effect:
    assert engine.list_memories(engine.authenticate(stale)).total == 0  # it just sees nothing


def test_key_scopes_name_only_what_the_viewer_sees(
    engine: Engine, alice: Principal, bob: Principal
) -> None:
    root = engine.principal(engine.create_user("root", admin=True).id)
    private = engine.create_memory(
        alice, name="личное", memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z"
    )
    engine.create_api_key(alice, alice.user_id, name="k", scope=[private.id])
    (seen,) = engine.key_scopes(alice, alice.user_id).values()
    assert (seen.name, seen.deleted) == ("личное", False)
    (hidden,) = engine.key_scopes(root, alice.user_id).values()  # an admin lists the key
    assert (hidden.name, hidden.deleted) == (None, False)  # but may not read the memory

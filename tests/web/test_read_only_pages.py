"""A key that may only read sees no live control it would be refused, on the entry and the
configuration pages too (issue 54 item 2); posting anyway is refused with a page that keeps
the navigation and a way back, and changes nothing. A retired version offers no review or
switches, and a reinstated one no longer says it was superseded."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient
from tests.support.engine import extracted
from tests.support.web import Login, form_token

from recallery import Engine, Memory, Principal
from recallery.models import Trust

NAV = '<nav aria-label="main">'
#: The controls a read-only key may not use, by their text.
LIVE = ("Disable", "Enable", "Forget", "Restore", "Confirm", "Reject", "Save", "Import")


def _enabled(html: str, label: str) -> list[str]:
    """The opening tags of the enabled buttons whose text is ``label``."""
    tags = re.findall(r"<button[^>]*>\s*" + re.escape(label) + r"[^<]*</button>", html)
    return [t for t in tags if " disabled" not in t]


def _seed(engine: Engine, alice: Principal, notes: Memory) -> tuple[int, int]:
    """Three users' turns (one in Chinese); a fact from Tom's: (its turn, the fact)."""
    turns = {
        user: engine.add_turn(
            alice, [notes.id], user_input=said, agent_response="noted", user_id=user
        )[0]
        for user, said in (
            ("tom", "my cat is Miso"),
            ("ana", "我住在上海"),
            ("li", "Я живу в Казани"),
        )
    }
    return turns["tom"].message_id, extracted(engine, turns["tom"], "Tom's cat is called Miso")


def _reader(login: Login, engine: Engine, alice: Principal) -> TestClient:
    _, key = engine.create_api_key(alice, alice.user_id, capabilities=["read"])
    return login(key)


def test_the_entry_page_offers_a_read_only_key_no_live_control(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    turn, fact = _seed(engine, alice, notes)
    c = _reader(login, engine, alice)
    for entry in (turn, fact):
        html = c.get(f"/memories/{notes.id}/entries/{entry}").text
        for label in (*LIVE, "Write a corrected version", "Erase for good"):
            assert _enabled(html, label) == [], (entry, label)
        correct = re.search(r"<button[^>]*>Write a corrected version</button>", html)
        assert correct and "lacks the 'write' capability" in correct.group(0)
        assert 'id="switches-help"' in html and "Neither deletes" in html
    # the owner's full key sees them live
    full = login(alice_key).get(f"/memories/{notes.id}/entries/{fact}").text
    for label in ("Disable", "Forget", "Confirm", "Write a corrected version", "Erase for good"):
        assert _enabled(full, label), label


def test_posting_from_the_entry_page_anyway_is_refused_with_a_way_back(
    login: Login, engine: Engine, alice: Principal, notes: Memory
) -> None:
    _, fact = _seed(engine, alice, notes)
    c = _reader(login, engine, alice)
    here = f"/memories/{notes.id}/entries/{fact}"
    token = form_token(c.get(here).text)
    for action, data in (
        ("status", {"enabled": "0"}),
        ("forget", {}),
        ("correct", {"content": "Tom's cat is called Mochi"}),
        ("review", {"verdict": "confirmed"}),
    ):
        refused = c.post(f"{here}/{action}", data={"csrf": token, **data})
        assert refused.status_code == 403, action
        assert NAV in refused.text and f'href="{here}" id="way-back"' in refused.text, action
    # a browser's Referer is the way back when it has one
    came = f"/memories/{notes.id}/facts?user=tom"
    refused = c.post(
        f"{here}/forget", data={"csrf": token}, headers={"referer": f"http://testserver{came}"}
    )
    assert f'href="{came.replace("?", "?")}" id="way-back"' in refused.text.replace("&amp;", "&")
    # another site's Referer is not followed
    elsewhere = c.post(
        f"{here}/forget", data={"csrf": token}, headers={"referer": "https://evil.example/x"}
    )
    assert "evil.example" not in elsewhere.text
    after, _ = engine.get_entry(alice, notes.id, fact)
    assert (after.status, after.forget_at, after.trust) == (True, None, Trust.UNREVIEWED)
    assert after.content == "Tom's cat is called Miso" and after.retired_at is None


def test_the_configuration_page_offers_a_read_only_key_no_save_or_import(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    c = _reader(login, engine, alice)
    here = f"/memories/{notes.id}/config"
    html = c.get(here).text
    for label in ("Save", "Import", "Test chat model"):
        assert _enabled(html, label) == [], label
    save = re.search(r"<button[^>]*>Save</button>", html)
    assert save and "lacks the 'manage' capability (to configure)" in save.group(0)
    token = form_token(html)
    refused = c.post(here, data={"csrf": token, "name": "renamed"})
    # refused on the configuration page itself, with the reason
    assert refused.status_code == 400 and NAV in refused.text and 'id="config-form"' in refused.text
    assert "lacks the &#39;manage&#39; capability (to configure)" in refused.text
    files = {"file": ("m.jsonl", b'{"type": "raw", "content": "x"}\n', "application/json")}
    imported = c.post(f"/memories/{notes.id}/import", data={"csrf": token}, files=files)
    assert imported.status_code in (400, 403) and NAV in imported.text
    assert "lacks the &#39;write&#39; capability" in imported.text
    assert engine.get_memory(alice, notes.id).name == "notes"
    assert engine.list_messages(alice, notes.id).total == 0
    full = login(alice_key).get(here).text
    assert _enabled(full, "Save") and _enabled(full, "Import")


def test_a_read_write_key_may_correct_but_not_configure(
    login: Login, engine: Engine, alice: Principal, notes: Memory
) -> None:
    _, fact = _seed(engine, alice, notes)
    _, key = engine.create_api_key(alice, alice.user_id, capabilities=["read", "write"])
    c = login(key)
    entry = c.get(f"/memories/{notes.id}/entries/{fact}").text
    assert _enabled(entry, "Write a corrected version") and _enabled(entry, "Forget")
    assert _enabled(entry, "Confirm") == [] and _enabled(entry, "Erase for good") == []
    config = c.get(f"/memories/{notes.id}/config").text
    assert _enabled(config, "Save") == [] and _enabled(config, "Import")


def test_a_retired_version_offers_no_review_or_switches_and_a_reinstated_one_is_current(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    _, fact = _seed(engine, alice, notes)
    new = engine.correct(alice, notes.id, fact, "Tom's cat is called Mochi", reason="typo")
    c = login(alice_key)
    old = c.get(f"/memories/{notes.id}/entries/{fact}").text
    for label in ("Confirm", "Reject", "Disable", "Forget"):
        assert not re.search(r"<button[^>]*>" + label + "</button>", old), label
    assert 'id="retired-actions"' in old
    assert f'href="/memories/{notes.id}/entries/{new.message_id}">the current version' in old
    current = c.get(f"/memories/{notes.id}/entries/{new.message_id}").text
    assert "keeps this one's valid time" in current
    engine.reinstate(alice, notes.id, fact, "the first was right")
    back = c.get(f"/memories/{notes.id}/entries/{fact}").text
    assert "Superseded by" not in back and 'id="retired-actions"' not in back
    assert _enabled(back, "Forget")


def test_counts_of_one_are_singular_and_a_missing_entry_is_said_not_to_exist(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    engine.add_turn(alice, [notes.id], user_input="我住在上海", agent_response="ok", user_id="ana")
    c = login(alice_key)
    head = c.get(f"/memories/{notes.id}/messages").text
    assert "1 entry" in head and "1 entries" not in head
    overview = c.get(f"/memories/{notes.id}").text
    assert "1 entries" not in overview and "1 jobs" not in overview
    missing = c.get(f"/memories/{notes.id}/entries/9999")
    assert missing.status_code == 404 and NAV in missing.text
    assert "Message 9999 does not exist" in missing.text and "was not erased" not in missing.text


def test_the_delete_page_and_a_users_own_keys_page_offer_nothing_refused(
    login: Login, engine: Engine, alice: Principal, notes: Memory
) -> None:
    """Found by the browser walk: Delete the memory was live for a read-only key, and a user's
    own keys page linked to the administrators' users list."""
    _seed(engine, alice, notes)
    c = _reader(login, engine, alice)
    html = c.get(f"/memories/{notes.id}/delete").text
    assert _enabled(html, "Delete the memory") == []
    assert "lacks the 'manage' capability" in html
    bob = engine.create_user("bob-walker")
    _, key = engine.create_api_key(engine.principal(bob.id), bob.id)
    own = login(key).get(f"/users/{bob.id}/keys")
    assert own.status_code == 200 and 'href="/users"' not in own.text

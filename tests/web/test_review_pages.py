"""The review queue without a browser: a verdict given with htmx sends the queue's new count
beside the verdict's card (counted with the queue's filters), the form without script comes
back to the queue with the count; and reviewing needs the ``manage`` capability, so a session
whose key may read and write sees the verdict controls disabled with the reason and is refused
when it posts one anyway."""

from __future__ import annotations

import re

from tests.support.engine import extracted
from tests.support.web import Login, form_token

from recallery import Engine, Memory, Principal
from recallery.models import Trust

HTMX = {"HX-Request": "true"}


def _seed(engine: Engine, alice: Principal, notes: Memory) -> dict[str, int]:
    """Three facts waiting for review: two of Tom's turns, one of Ann's."""
    ids = {}
    for name, user, said in (
        ("cat", "tom", "my cat is Miso"),
        ("dog", "tom", "my dog is Rex"),
        ("oslo", "ann", "I flew to Oslo"),
    ):
        (raw,) = engine.add_turn(
            alice, [notes.id], user_input=said, agent_response="noted", user_id=user
        )
        ids[name] = extracted(engine, raw, f"{user}: {said}")
    return ids


def _count(html: str) -> str:
    """The queue's count element, as sent."""
    found = re.search(r'<span class="muted" id="review-waiting"[^>]*>[^<]*</span>', html)
    assert found, "no count"
    return found.group(0)


def test_a_verdict_sent_with_htmx_carries_the_queues_new_count(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    ids = _seed(engine, alice, notes)
    c = login(alice_key)
    queue = f"/memories/{notes.id}/review"
    page = c.get(queue).text
    assert ">3 extracted entries waiting, oldest first<" in _count(page)
    token = form_token(page)
    entry = f"/memories/{notes.id}/entries/{ids['cat']}/review"
    done = c.post(entry, data={"csrf": token, "verdict": "confirmed"}, headers=HTMX)
    assert done.status_code == 200 and f'id="review-{ids["cat"]}"' in done.text
    assert _count(done.text) == (
        '<span class="muted" id="review-waiting" hx-swap-oob="true">'
        "2 extracted entries waiting, oldest first</span>"
    )
    # the queue filtered by user: its form carries the filter, and the count is Tom's
    tom = c.get(f"{queue}?user=tom").text
    assert '<input type="hidden" name="user_id" value="tom">' in tom
    assert ">1 extracted entry waiting for these filters, oldest first<" in _count(tom)
    entry = f"/memories/{notes.id}/entries/{ids['dog']}/review"
    sent = {"csrf": token, "verdict": "rejected", "user": "tom"}
    done = c.post(entry, data=sent, headers=HTMX)
    assert ">0 extracted entries waiting for these filters, oldest first<" in _count(done.text)
    assert engine.review_queue(alice, notes.id).total == 1  # Ann's fact waits still
    assert [e.action for e in engine.audit_log(alice, message_id=ids["dog"]).items][:1] == [
        "entry.reject"
    ]


def test_a_verdict_without_script_comes_back_to_the_queue_counted_again(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    ids = _seed(engine, alice, notes)
    c = login(alice_key)
    queue = f"/memories/{notes.id}/review?user=ann"
    page = c.get(queue).text
    sent = {"csrf": form_token(page), "verdict": "confirmed", "next": queue, "user": "ann"}
    done = c.post(f"/memories/{notes.id}/entries/{ids['oslo']}/review", data=sent)
    assert done.status_code == 303 and done.headers["location"] == queue
    again = c.get(queue).text
    assert f"Message {ids['oslo']} is confirmed." in again
    assert ">0 extracted entries waiting for these filters, oldest first<" in _count(again)
    assert engine.get_entry(alice, notes.id, ids["oslo"])[0].trust is Trust.CONFIRMED


def test_an_invalid_filter_counts_the_whole_queue_and_carries_no_filter(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    _seed(engine, alice, notes)
    page = login(alice_key).get(f"/memories/{notes.id}/review?type=raw")
    assert page.status_code == 400
    assert ">3 extracted entries waiting, oldest first<" in _count(page.text)
    assert 'type="hidden" name="type"' not in page.text


def test_a_read_write_session_sees_why_it_cannot_review_and_is_refused(
    login: Login, engine: Engine, alice: Principal, notes: Memory
) -> None:
    ids = _seed(engine, alice, notes)
    _, key = engine.create_api_key(alice, alice.user_id, capabilities=["read", "write"])
    c = login(key)
    why = (
        "This key lacks the 'manage' capability (to review): reviewing is the check on "
        "what writing keys (agents) add, so a key that may only read and write cannot vouch "
        "for its own writes"
    )
    pages = {
        "queue": c.get(f"/memories/{notes.id}/review").text,
        "facts": c.get(f"/memories/{notes.id}/facts").text,
        "entry": c.get(f"/memories/{notes.id}/entries/{ids['cat']}").text,
    }
    for name, html in pages.items():
        verdicts = re.findall(r'<button[^>]*value="(?:confirmed|rejected)"[^>]*>', html)
        assert verdicts, name
        for button in verdicts:
            assert f' disabled aria-disabled="true" title="{why}"' in button, (name, button)
    # its other controls stay live
    assert re.search(r'<button[^>]*aria-label="forget fact[^>]*>', pages["facts"])
    assert "disabled" not in re.findall(r'<button[^>]*value="0"[^>]*>', pages["facts"])[0]
    before = engine.audit_log(alice, memory_id=notes.id).total
    token = form_token(pages["queue"])
    entry = f"/memories/{notes.id}/entries/{ids['cat']}/review"
    refused = c.post(entry, data={"csrf": token, "verdict": "confirmed"}, headers=HTMX)
    assert refused.status_code == 403 and "cannot vouch for its own writes" in refused.text
    bulk = {"csrf": token, "verdict": "confirmed", "ids": [str(ids["cat"]), str(ids["dog"])]}
    assert c.post(f"/memories/{notes.id}/review", data=bulk).status_code == 403
    for message_id in ids.values():
        assert engine.get_entry(alice, notes.id, message_id)[0].trust is Trust.UNREVIEWED
    assert engine.audit_log(alice, memory_id=notes.id).total == before

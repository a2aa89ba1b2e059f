"""The Facts page and the facts under a turn without a browser: the flat table filters by
type, trust, status, user and text (what a filter excludes is absent), each row's actions
change the fact through the engine and come back to the page, a correction by someone who may
review comes back confirmed, and the review queue filters by user and type."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient
from tests.support.engine import extracted
from tests.support.web import Login, form_token

from recallery import Engine, Memory, Principal
from recallery.models import Capability, EntryType, Trust


def _seed(engine: Engine, alice: Principal, notes: Memory) -> dict[str, int]:
    """Two users' turns, each with one fact; Ann's fact is episodic."""
    ids = {}
    for user, said, fact, kind in (
        ("tom", "my cat is Miso", "Tom's cat is called Miso", EntryType.SEMANTIC),
        ("ann", "I flew to Oslo", "Ann flew to Oslo in May", EntryType.EPISODIC),
    ):
        (raw,) = engine.add_turn(
            alice, [notes.id], user_input=said, agent_response="noted", user_id=user
        )
        ids[f"{user}_turn"] = raw.message_id
        ids[user] = extracted(engine, raw, fact, message_type=kind)
    return ids


def _rows(html: str) -> list[int]:
    return [int(i) for i in re.findall(r'<tr id="fact-(\d+)"', html)]


def test_the_facts_table_filters_each_field(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    ids = _seed(engine, alice, notes)
    engine.review(alice, notes.id, ids["tom"], "confirmed")
    c: TestClient = login(alice_key)
    every = c.get(f"/memories/{notes.id}/facts")
    assert every.status_code == 200 and 'aria-current="page">Facts<' in every.text
    assert sorted(_rows(every.text)) == sorted([ids["tom"], ids["ann"]])  # never the raw turns
    assert f'href="/memories/{notes.id}/entries/{ids["tom_turn"]}">turn' in every.text
    base = f"/memories/{notes.id}/facts"
    assert _rows(c.get(f"{base}?user=tom").text) == [ids["tom"]]
    assert _rows(c.get(f"{base}?type=episodic").text) == [ids["ann"]]
    assert _rows(c.get(f"{base}?trust=confirmed").text) == [ids["tom"]]
    assert _rows(c.get(f"{base}?text=OSLO").text) == [ids["ann"]]
    engine.set_status(alice, notes.id, ids["ann"], False)
    assert _rows(c.get(f"{base}?status=disabled").text) == [ids["ann"]]
    assert _rows(c.get(f"{base}?status=enabled").text) == [ids["tom"]]
    filtered = c.get(f"{base}?user=nobody")
    assert "<strong>0</strong> facts match these filters" in filtered.text
    wrong = c.get(f"{base}?type=raw")
    assert wrong.status_code == 400 and "raw turn is not a fact" in wrong.text


def test_row_actions_change_the_fact_and_come_back(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    ids = _seed(engine, alice, notes)
    c: TestClient = login(alice_key)
    here = f"/memories/{notes.id}/facts?user=tom"
    token = form_token(c.get(here).text)
    entry = f"/memories/{notes.id}/entries/{ids['tom']}"
    sent = {"csrf": token, "next": here, "redirect": "1"}
    done = c.post(f"{entry}/review", data={**sent, "verdict": "rejected"})
    assert done.status_code == 303 and done.headers["location"] == here
    htmx = c.post(f"{entry}/status", data={**sent, "enabled": "0"}, headers={"HX-Request": "true"})
    assert htmx.status_code == 303 and htmx.headers["location"] == here
    c.post(f"{entry}/forget", data=sent)
    fact, _ = engine.get_entry(alice, notes.id, ids["tom"])
    assert (fact.trust, fact.status, fact.forget_at is not None) == (Trust.REJECTED, False, True)
    other, _ = engine.get_entry(alice, notes.id, ids["ann"])
    assert (other.trust, other.status, other.forget_at) == (Trust.UNREVIEWED, True, None)
    page = c.get(here).text
    assert f'aria-label="restore fact {ids["tom"]}"' in page
    assert f'aria-label="enable fact {ids["tom"]}"' in page


def test_an_inline_correction_is_a_verdict(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    ids = _seed(engine, alice, notes)
    c: TestClient = login(alice_key)
    here = f"/memories/{notes.id}/facts"
    page = c.get(here).text
    assert f'id="correct-{ids["tom"]}"' in page and 'form="correct-' in page
    answer = c.post(
        f"/memories/{notes.id}/entries/{ids['tom']}/correct",
        data={"csrf": form_token(page), "next": here, "content": "Tom's cat is Mochi"},
    )
    assert answer.status_code == 303 and answer.headers["location"] == here
    after = c.get(here).text
    assert "Tom&#39;s cat is Mochi" in after and "Tom&#39;s cat is called Miso" not in after
    assert ", confirmed replaces" in after  # the flash
    newest = engine.history(alice, notes.id, ids["tom"])[-1]
    assert newest.trust is Trust.CONFIRMED


def test_a_correction_without_review_rights_stays_unreviewed(
    engine: Engine, alice: Principal, notes: Memory
) -> None:
    ids = _seed(engine, alice, notes)
    writer = engine.principal(
        alice.user_id, capabilities=frozenset({Capability.READ, Capability.WRITE})
    )
    fixed = engine.correct(writer, notes.id, ids["ann"], "Ann flew to Oslo in June")
    assert fixed.trust is Trust.UNREVIEWED


def test_the_facts_under_a_turn_have_actions_and_expand_all(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    ids = _seed(engine, alice, notes)
    c: TestClient = login(alice_key)
    turns = f"/memories/{notes.id}/messages"
    page = c.get(turns).text
    assert f'<tr id="x-{ids["tom"]}">' in page and f"confirm fact {ids['tom']}" in page
    assert '<details class="extracts" open>' not in page and 'id="expand-all"' in page
    opened = c.get(f"{turns}?open=1").text
    assert opened.count('<details class="extracts" open>') == 2 and 'id="collapse-all"' in opened
    # a raw turn is never reviewed, so it wears no trust badge; its text is split
    assert 'badge trust-unreviewed">unreviewed</span> <a' not in page
    assert '<span class="muted">user</span> my cat is Miso' in page
    assert '<pre class="text">noted</pre>' in page
    done = c.post(
        f"/memories/{notes.id}/entries/{ids['tom']}/review",
        data={"csrf": form_token(page), "next": turns, "redirect": "1", "verdict": "confirmed"},
        headers={"HX-Request": "true"},
    )
    assert done.status_code == 303 and done.headers["location"] == turns
    assert engine.get_entry(alice, notes.id, ids["tom"])[0].trust is Trust.CONFIRMED


def test_the_review_queue_filters_by_user_and_type(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    ids = _seed(engine, alice, notes)
    c: TestClient = login(alice_key)
    queue = f"/memories/{notes.id}/review"

    def waiting(url: str) -> list[int]:
        return [
            int(i)
            for i in re.findall(
                r'<article class="review-item" [^>]*data-id="(\d+)"', c.get(url).text
            )
        ]

    assert sorted(waiting(queue)) == sorted([ids["tom"], ids["ann"]])
    assert waiting(f"{queue}?user=ann") == [ids["ann"]]
    assert waiting(f"{queue}?type=semantic") == [ids["tom"]]
    assert waiting(f"{queue}?user=ann&type=semantic") == []
    assert c.get(f"{queue}?type=raw").status_code == 400

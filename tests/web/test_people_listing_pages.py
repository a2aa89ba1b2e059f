"""The People listing without a browser: the users, agents and sessions of the memories the
viewer may read, with counts, searched and paged; every user, agent and session id shown on
the Messages, entry and Facts pages links to its page; and ids with ``/``, ``?``, ``#``,
``..``, spaces or Chinese reach their page and their forms unchanged. A user held only in a
memory the viewer cannot read, and one outside a scoped key, must be absent."""

from __future__ import annotations

from html import escape

from fastapi.testclient import TestClient
from tests.support.engine import extracted, turn
from tests.support.web import Login, form_token

from recallery import Engine, Memory, Principal
from recallery.models import Scope
from recallery.store.filters import EntryFilter
from recallery.testing import FrozenClock
from recallery.web.links import person_url

ODD = ("tom/1?x=2#top", "..", "a b", "王小明")


def _href(kind: str, value: str, action: str = "") -> str:
    return f'href="{escape(person_url(kind, value, action))}"'


def _rows(html: str) -> list[str]:
    """The ids of the People table's rows, in order."""
    return [part.split('"', 1)[0] for part in html.split('<tr data-id="')[1:]]


def _seed(
    engine: Engine, alice: Principal, bob: Principal, notes: Memory, clock: FrozenClock
) -> None:
    for user, text in (("tom", "I live in Manchester"), ("ana", "Vivo en Valencia")):
        clock.advance(minutes=1)
        raw = turn(engine, alice, notes, text, user_id=user, agent_id="helper", session_id="s-1")
        extracted(engine, raw, f"fact of {user}")
    clock.advance(minutes=1)
    turn(engine, alice, notes, "我住在北京", user_id="王小明", agent_id="concierge")
    hidden = engine.create_memory(
        bob, name="hidden", memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z"
    )
    turn(engine, bob, hidden, "Bob's customer", user_id="secret-user", agent_id="spy")


def test_the_people_page_lists_users_with_counts_and_searches(
    login: Login,
    alice_key: str,
    engine: Engine,
    alice: Principal,
    bob: Principal,
    notes: Memory,
    clock: FrozenClock,
) -> None:
    _seed(engine, alice, bob, notes, clock)
    c: TestClient = login(alice_key)
    page = c.get("/people")
    assert page.status_code == 200
    assert _rows(page.text) == ["王小明", "ana", "tom"]  # latest activity first
    assert "secret-user" not in page.text  # only in Bob's private memory
    tom = page.text.split('<tr data-id="tom">', 1)[1].split("</tr>", 1)[0]
    assert _href("user", "tom") in tom and '<td class="num">1</td>' in tom  # one fact, one turn
    agents = c.get("/people?kind=agent")
    assert _rows(agents.text) == ["concierge", "helper"] and "spy" not in agents.text
    assert _rows(c.get("/people?kind=session").text) == ["s-1"]
    searched = c.get("/people", params={"keywords": "小明"}).text  # REST's name for it
    assert _rows(searched) == ["王小明"] and 'name="keywords" value="小明"' in searched
    assert _rows(c.get("/people", params={"keywords": "secret"}).text) == []
    assert _rows(c.get("/people", params={"q": "小明"}).text) == ["王小明"]  # the old name
    bad = c.get("/people?kind=planet")
    assert bad.status_code == 400 and "kind must be user, agent or session" in bad.text


def test_the_people_page_pages(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    for n in range(27):
        turn(engine, alice, notes, f"turn {n}", user_id=f"user-{n:02d}")
    c = login(alice_key)
    first = c.get("/people", params={"size": "25"})
    assert len(_rows(first.text)) == 25 and "page 1 of 2" in first.text
    second = c.get("/people", params={"size": "25", "page": "2"})
    assert len(_rows(second.text)) == 2 and "<strong>27</strong> users" in second.text


def test_a_scoped_key_lists_only_the_people_of_its_memories(
    login: Login, engine: Engine, alice: Principal, notes: Memory
) -> None:
    other = engine.create_memory(
        alice, name="other", memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z"
    )
    turn(engine, alice, notes, "in notes", user_id="tom")
    turn(engine, alice, other, "in other", user_id="ana")
    _, key = engine.create_api_key(alice, alice.user_id, scope=[other.id])
    assert _rows(login(key).get("/people").text) == ["ana"]


def test_every_id_on_the_messages_entry_and_facts_pages_links_to_its_page(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    raw = turn(
        engine, alice, notes, "I live in Porto", user_id="王小明", agent_id="a/1", session_id="s #2"
    )
    fact = extracted(engine, raw, "The user lives in Porto")
    c = login(alice_key)
    links = (_href("user", "王小明"), _href("agent", "a/1"), _href("session", "s #2"))
    messages = c.get(f"/memories/{notes.id}/messages").text
    entry = c.get(f"/memories/{notes.id}/entries/{raw.message_id}").text
    assert all(link in messages and link in entry for link in links)
    facts = c.get(f"/memories/{notes.id}/facts").text
    assert _href("user", "王小明") in facts and f"fact-{fact}" in facts


def test_odd_ids_reach_their_page_and_their_forms(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    for user in ODD:
        turn(engine, alice, notes, f"a turn of {user}", user_id=user, agent_id=user)
    c = login(alice_key)
    listed = c.get("/people").text
    for user in ODD:
        assert _href("user", user) in listed
        page = c.get(person_url("user", user))
        assert page.status_code == 200, user
        assert f'<span id="subject-id">{escape(user)}</span>' in page.text
        assert "1 entry in 1 memory" in page.text
        assert _href("user", user, "erase") in page.text
        agent = c.get(person_url("agent", user))
        assert agent.status_code == 200 and "1 entry in 1 memory" in agent.text
    # erase "..": the preview, its form and the receipt all name ".." and no one else
    preview = c.get(person_url("user", "..", "erase"))
    assert "<strong>1</strong> entry" in preview.text
    assert f'action="{escape(person_url("user", "..", "erase"))}"' in preview.text
    done = c.post(
        person_url("user", "..", "erase"),
        data={"csrf": form_token(preview.text), "confirm": "..", "reason": "asked"},
    )
    assert done.status_code == 303 and done.headers["location"] == person_url(
        "user", "..", "erase", done=True
    )
    assert "Erased" in c.get(done.headers["location"]).text
    with engine.store.read() as r:
        left, _ = r.entries(Scope.of(notes.id), EntryFilter(current_only=False), limit=20)
    assert sorted(e.user_id for e in left) == sorted(u for u in ODD if u != "..")

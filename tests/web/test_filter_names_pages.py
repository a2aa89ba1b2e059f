"""The web pages name their filters as REST does (issue 56: one name per filter in every
layer): every page's filter form (Memories, search playground, audit log, Messages, Facts,
review, People) has only the query parameters its REST route declares, page sizes included
(``page_size``), and the old names (``user``, ``type``, ``agent``, ``session``, ``q``,
``memory``, ``owner``, ``size``, the Facts page's single status field) are still read one
release, selecting the same rows. Three users in one memory (one writing Russian, one
Chinese) and data in another memory (or another user's): what a filter leaves out is absent
under either name."""

from __future__ import annotations

import re

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from tests.support.engine import extracted, turn
from tests.support.web import Login

from recallery import Engine, Memory, Principal
from recallery.models import EntryType
from recallery.requests.curation import fact_filter_fields, review_filter_fields
from recallery.requests.messages import message_filter_fields
from recallery.web import views_entries, views_facts, views_messages
from recallery.web.listing import OLD_NAMES

#: Each user's turn and the fact extracted from it; 小明's fact is episodic.
SAID = {
    "tom": ("My cat is Miso", "Tom's cat is called Miso", EntryType.SEMANTIC),
    "маша": ("Я живу в Казани", "Маша живёт в Казани", EntryType.SEMANTIC),
    "小明": ("我去年去了上海", "小明去年去了上海", EntryType.EPISODIC),
}


def _seed(engine: Engine, alice: Principal, notes: Memory) -> dict[str, tuple[int, int]]:
    ids = {}
    for user, (text, fact, kind) in SAID.items():
        raw = turn(engine, alice, notes, text, user_id=user, agent_id=f"agent-{user}")
        ids[user] = (raw.message_id, extracted(engine, raw, fact, message_type=kind))
    other = engine.create_memory(
        alice, name="other", memory_type=["raw", "semantic"], embd_id="x@Builtin", llm_id="y@Z"
    )
    raw = turn(engine, alice, other, "I live in Oslo", user_id="tom")
    extracted(engine, raw, "Tom lives in Oslo")
    return ids


def _ids(html: str, prefix: str) -> set[int]:
    return {int(i) for i in re.findall(rf'id="{prefix}-(\d+)"', html)}


def _filter_fields(html: str) -> set[str]:
    """The names of the fields of a page's filter form (its form that reads with GET)."""
    (form,) = re.findall(r'<form[^>]*method="get"[^>]*>(.*?)</form>', html, flags=re.S)
    return set(re.findall(r'\sname="([^"]+)"', form))


def _rest_names(app: FastAPI, path: str) -> set[str]:
    """The query parameters REST's GET ``path`` declares (its OpenAPI schema)."""
    operation = app.openapi()["paths"][f"/api/v1{path}"]["get"]
    return {p["name"] for p in operation["parameters"] if p["in"] == "query"}


def test_every_filter_field_of_the_pages_is_a_declared_wire_name() -> None:
    messages = {f.metadata["wire"] for f in message_filter_fields()}
    facts = {f.metadata["wire"] for f in fact_filter_fields()}
    review = {f.metadata["wire"] for f in review_filter_fields()}
    assert set(views_messages.FILTERS) <= messages
    assert set(views_facts.FILTERS) <= facts
    assert set(views_entries.QUEUE_FILTERS) == review
    assert set(OLD_NAMES.values()) <= messages


@pytest.mark.parametrize("name", ["user_id", "user"])
def test_the_facts_and_review_pages_filter_by_user_under_either_name(
    name: str, login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    ids = _seed(engine, alice, notes)
    c: TestClient = login(alice_key)
    facts = c.get(f"/memories/{notes.id}/facts", params={name: "маша"})
    assert facts.status_code == 200
    assert _ids(facts.text, "fact") == {ids["маша"][1]}
    assert 'name="user_id" value="маша"' in facts.text
    queue = c.get(f"/memories/{notes.id}/review", params={name: "小明"})
    assert _ids(queue.text, "review") == {ids["小明"][1]}
    kind = "message_type" if name == "user_id" else "type"
    events = c.get(f"/memories/{notes.id}/facts", params={kind: "episodic"})
    assert _ids(events.text, "fact") == {ids["小明"][1]}


@pytest.mark.parametrize(("user", "agent"), [("user_id", "agent_id"), ("user", "agent")])
def test_the_messages_page_filters_under_either_name(
    user: str,
    agent: str,
    login: Login,
    alice_key: str,
    engine: Engine,
    alice: Principal,
    notes: Memory,
) -> None:
    ids = _seed(engine, alice, notes)
    c: TestClient = login(alice_key)
    page = c.get(f"/memories/{notes.id}/messages", params={user: "tom"})
    assert page.status_code == 200
    assert f"/entries/{ids['tom'][0]}" in page.text
    assert all(f"/entries/{ids[u][0]}" not in page.text for u in ("маша", "小明"))
    assert 'name="user_id" value="tom"' in page.text  # the form names it as REST does
    page = c.get(f"/memories/{notes.id}/messages", params={agent: "agent-маша"})
    assert f"/entries/{ids['маша'][0]}" in page.text
    assert f"/entries/{ids['tom'][0]}" not in page.text


def test_every_pages_filter_form_has_only_the_names_its_rest_route_declares(
    app: FastAPI, login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    _seed(engine, alice, notes)
    c: TestClient = login(alice_key)
    m = f"/memories/{notes.id}"
    pages = {  # each page, and the REST route it is the web's view of
        "/": "/memories",
        f"/search?memory_id={notes.id}": "/messages/context",  # the search's, and max_tokens
        "/audit": "/audit",
        f"{m}/messages": "/memories/{memory_id}",
        f"{m}/facts": "/memories/{memory_id}/facts",
        f"{m}/review": "/memories/{memory_id}/review",
        "/people": "/subjects",
    }
    for address, route in pages.items():
        page = c.get(address)
        assert page.status_code == 200, address
        fields = _filter_fields(page.text)
        assert fields and fields <= _rest_names(app, route), (address, fields)
    assert {"page_size", "status", "forgotten"} <= _filter_fields(c.get(f"{m}/facts").text)
    assert "page_size" in _filter_fields(c.get(f"{m}/messages").text)
    assert {"query", "memory_id"} <= _filter_fields(c.get("/search").text)


def test_the_pages_link_to_each_other_by_the_rest_names(
    login: Login, alice_key: str, notes: Memory
) -> None:
    c: TestClient = login(alice_key)
    overview = c.get(f"/memories/{notes.id}").text
    assert f'href="/search?memory_id={notes.id}"' in overview
    assert f'href="/audit?memory_id={notes.id}"' in overview
    assert "?memory=" not in overview
    for tab in ("search", "audit"):
        moved = c.get(f"/memories/{notes.id}/{tab}")
        assert moved.headers["location"] == f"/{tab}?memory_id={notes.id}"


def _memory_names(html: str) -> set[str]:
    return set(re.findall(r'class="strong">([^<]+)</a>', html))


@pytest.mark.parametrize(
    "names",
    [
        {"keywords": "keywords", "memory_type": "memory_type", "owner_ids": "owner_ids"},
        {"keywords": "q", "memory_type": "type", "owner_ids": "owner"},
    ],
)
def test_the_memories_list_filters_under_either_name(
    names: dict[str, str],
    login: Login,
    alice_key: str,
    engine: Engine,
    alice: Principal,
    bob: Principal,
) -> None:
    def make(owner: Principal, name: str, kind: str, permissions: str = "me") -> None:
        engine.create_memory(
            owner,
            name=name,
            memory_type=["raw", kind],
            embd_id="x@Builtin",
            llm_id="y@Z",
            permissions=permissions,
        )

    make(alice, "заметки Маши", "semantic")
    make(alice, "小明的笔记", "episodic")
    make(bob, "team notes 共享", "semantic", "team")
    make(bob, "заметки Боба", "episodic")  # Bob's own: never listed for Alice
    engine.join_team(bob, bob.user_id, alice.user_id)
    c: TestClient = login(alice_key)
    everything = _memory_names(c.get("/").text)
    assert everything == {"заметки Маши", "小明的笔记", "team notes 共享"}

    def listed(key: str, value: str) -> set[str]:
        page = c.get("/", params={names[key]: value})
        assert page.status_code == 200
        assert 'name="keywords"' in page.text and 'name="owner_ids"' in page.text
        return _memory_names(page.text)

    assert listed("keywords", "заметки") == {"заметки Маши"}
    assert listed("keywords", "笔记") == {"小明的笔记"}
    assert listed("memory_type", "episodic") == {"小明的笔记"}
    assert listed("owner_ids", bob.user_id) == {"team notes 共享"}
    assert listed("owner_ids", alice.user_id) == {"заметки Маши", "小明的笔记"}
    shown = c.get("/", params={names["keywords"]: "заметки"}).text
    assert 'name="keywords" value="заметки"' in shown  # the form names it as REST does


def test_the_memories_list_takes_rest_lists_and_pages_by_its_names(
    login: Login, alice_key: str, engine: Engine, alice: Principal
) -> None:
    for n in range(22):  # the list shows 20 a page
        kind = "episodic" if n % 2 else "semantic"
        engine.create_memory(
            alice,
            name=f"заметки {n:02d}",
            memory_type=["raw", kind],
            embd_id="x@Builtin",
            llm_id="y@Z",
        )
    c: TestClient = login(alice_key)
    both = c.get("/", params={"memory_type": "episodic,semantic", "keywords": "заметки"})
    assert len(_memory_names(both.text)) == 20 and "page 1 of 2" in both.text
    assert (
        "?keywords=%D0%B7%D0%B0%D0%BC%D0%B5%D1%82%D0%BA%D0%B8&amp;memory_type=episodic" in both.text
    )
    odd = c.get("/", params=[("memory_type", "episodic"), ("keywords", "1")])
    assert _memory_names(odd.text) == {
        "заметки 01",
        "заметки 11",
        "заметки 13",
        "заметки 15",
        "заметки 17",
        "заметки 19",
        "заметки 21",
    }
    bad = c.get("/", params={"memory_type": "planet"})
    assert bad.status_code == 400 and "Memory type" in bad.text and "planet" in bad.text


def _hits(html: str) -> set[int]:
    return {int(i) for i in re.findall(r'<tr data-id="(\d+)"', html)}


@pytest.mark.parametrize(("query", "memory"), [("query", "memory_id"), ("q", "memory")])
def test_the_playground_searches_under_either_name(
    query: str,
    memory: str,
    login: Login,
    alice_key: str,
    engine: Engine,
    alice: Principal,
    notes: Memory,
) -> None:
    ids = _seed(engine, alice, notes)
    (other,) = [m for m in engine.list_memories(alice).items if m.name == "other"]
    elsewhere = turn(engine, alice, other, "Я живу в Казани", user_id="маша")
    c: TestClient = login(alice_key)
    loose = {"similarity_threshold": "0", "top_n": "20"}
    page = c.get("/search", params={query: "Казани", memory: notes.id, **loose})
    assert page.status_code == 200
    hits = _hits(page.text)
    assert set(ids["маша"]) <= hits and elsewhere.message_id not in hits
    assert hits <= {i for pair in ids.values() for i in pair}
    assert 'name="query" value="Казани"' in page.text
    assert f'name="memory_id" value="{notes.id}" checked' in page.text
    mine = c.get("/search", params={query: "上海", memory: notes.id, "user_id": "小明", **loose})
    assert _hits(mine.text) == set(ids["小明"])
    both = c.get("/search", params={query: "Казани", memory: f"{notes.id},{other.id}", **loose})
    assert elsewhere.message_id in _hits(both.text)


@pytest.mark.parametrize("name", ["memory_id", "memory"])
def test_the_audit_log_filters_by_memory_under_either_name(
    name: str, login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    ids = _seed(engine, alice, notes)
    (other,) = [m for m in engine.list_memories(alice).items if m.name == "other"]
    elsewhere = turn(engine, alice, other, "我住在北京", user_id="小明")
    engine.forget(alice, notes.id, ids["маша"][1])
    engine.forget(alice, other.id, elsewhere.message_id)
    c: TestClient = login(alice_key)
    page = c.get("/audit", params={name: notes.id, "action": "entry.forget"})
    assert page.status_code == 200
    assert f'href="/memories/{notes.id}/entries/{ids["маша"][1]}"' in page.text
    assert f"/memories/{other.id}/entries/" not in page.text
    assert f'<option value="{notes.id}" selected>' in page.text
    assert f"memory_id={notes.id}" in page.text  # the memory's tabs, by REST's name


def test_the_facts_page_filters_by_rest_status_and_forgotten_and_the_old_statuses(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    ids = _seed(engine, alice, notes)
    tom, masha, ming = (ids[u][1] for u in ("tom", "маша", "小明"))
    engine.set_status(alice, notes.id, masha, False)
    engine.forget(alice, notes.id, ming)
    c: TestClient = login(alice_key)

    def shown(**asked: str) -> set[int]:
        page = c.get(f"/memories/{notes.id}/facts", params=asked)
        assert page.status_code == 200, page.text
        return _ids(page.text, "fact")

    assert shown() == {tom, masha, ming}  # the other memory's fact is never on this page
    assert shown(status="false") == shown(status="disabled") == {masha}
    assert shown(status="true", forgotten="false") == {tom}
    assert shown(forgotten="true") == shown(status="forgotten") == {ming}
    assert shown(forgotten="false") == shown(status="kept") == {tom, masha}
    assert shown(status="no") == {masha}  # as REST reads a yes-or-no filter
    old = c.get(f"/memories/{notes.id}/facts", params={"status": "kept"}).text
    assert '<option value="false" selected>no</option>' in old  # shown as the REST filter
    bad = c.get(f"/memories/{notes.id}/facts", params={"forgotten": "maybe"})
    assert bad.status_code == 400 and "forgotten must be true or false" in bad.text


@pytest.mark.parametrize("name", ["page_size", "size"])
def test_the_listing_pages_take_page_size_under_either_name(
    name: str, login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    users = ("tom", "маша", "小明")
    for n in range(27):
        turn(engine, alice, notes, f"turn {n}", user_id=users[n % 3], session_id=f"s-{n:02d}")
    other = engine.create_memory(
        alice, name="other", memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z"
    )
    turn(engine, alice, other, "elsewhere", user_id="ana")  # never counted here
    c: TestClient = login(alice_key)
    page = c.get(f"/memories/{notes.id}/messages", params={name: "25"})
    assert "<strong>27</strong> turns" in page.text and "page 1 of 2" in page.text
    assert len(_ids(page.text, "turn")) == 25 and "<option selected>25</option>" in page.text
    assert 'href="?page_size=25&amp;page=2"' in page.text  # the pager, by REST's name
    rest = c.get(f"/memories/{notes.id}/messages", params={name: "25", "page": "2"})
    assert len(_ids(rest.text, "turn")) == 2
    masha = c.get(f"/memories/{notes.id}/messages", params={name: "25", "user_id": "маша"})
    assert len(_ids(masha.text, "turn")) == 9 and "page 1 of" not in masha.text
    assert "user_id=%D0%BC%D0%B0%D1%88%D0%B0&amp;page_size=25" in masha.text
    sessions = c.get("/people", params={name: "25", "kind": "session"})
    assert len(re.findall(r'<tr data-id="s-\d+">', sessions.text)) == 25
    assert "page 1 of 2" in sessions.text and "page_size=25&amp;page=2" in sessions.text


def test_the_messages_page_sends_and_reads_rest_status_and_forgotten_values(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    """The status and forgotten fields send REST's true and false (shown as enabled or
    disabled, yes or no); the old values are still read and select the same option."""
    ids = _seed(engine, alice, notes)
    tom, masha, ming = (ids[u][0] for u in ("tom", "маша", "小明"))
    engine.set_status(alice, notes.id, masha, False)
    engine.forget(alice, notes.id, ming)
    c: TestClient = login(alice_key)

    def page(**asked: str) -> str:
        found = c.get(f"/memories/{notes.id}/messages", params=asked)
        assert found.status_code == 200, found.text
        return found.text

    def shown(**asked: str) -> set[int]:
        html = page(**asked)
        return {i for i in (tom, masha, ming) if f'/entries/{i}"' in html}

    assert shown(status="false") == shown(status="disabled") == {masha}
    assert shown(forgotten="true") == shown(forgotten="yes") == {ming}
    assert shown(status="true", forgotten="false") == shown(status="enabled", forgotten="no")
    assert shown(status="true", forgotten="false") == {tom}
    for asked in ({"status": "false"}, {"status": "disabled"}):
        assert '<option value="false" selected>disabled</option>' in page(**asked)
    for asked in ({"forgotten": "true"}, {"forgotten": "yes"}):
        assert '<option value="true" selected>yes</option>' in page(**asked)

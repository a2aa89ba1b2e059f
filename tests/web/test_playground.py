"""The search playground shows what an agent gets: at its defaults it ranks as the REST search
does at the API's defaults, from one search that counts as no retrieval (no use count, no
read in the request log)."""

from __future__ import annotations

import re

from fastapi import FastAPI
from fastapi.testclient import TestClient
from tests.support.web import Login

from recallery import Engine, Memory, Principal
from recallery.requests import search_knobs
from recallery.requests.requestlog import RequestQuery


def test_the_playground_at_its_defaults_ranks_as_the_rest_search(
    app: FastAPI, login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    texts = [
        "I moved to Berlin last spring",
        "Berlin has great museums",
        "my sister lives in Lyon",
        "the user moved twice",
        "a long story about moving boxes and a van",
        "Tom prefers tea over coffee",
    ]
    for text in texts:
        engine.add_turn(alice, [notes.id], user_input=text, agent_response="ok", user_id="u1")
    query = "where did the user move"
    api = TestClient(app, headers={"Authorization": f"Bearer {alice_key}"})
    listed = api.get("/api/v1/messages/search", params={"query": query, "memory_id": notes.id})
    rest_ids = [h["message_id"] for h in listed.json()["data"]]
    assert len(rest_ids) >= 2  # a ranking to compare, not an empty list

    browser = login(alice_key)
    page = browser.get("/search", params={"memory": notes.id, "q": query})
    assert page.status_code == 200
    shown = [int(i) for i in re.findall(r'<tr data-id="(\d+)"', page.text)]
    assert shown == rest_ids
    assert re.search(r"<option selected>balanced</option>", page.text)


def test_trying_a_query_counts_as_no_retrieval(
    app: FastAPI, login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    """The playground emits no retrieved event: no use count moves and the request log notes
    no entry it showed, for any of the memory's users; an agent's search moves both."""
    (turn,) = engine.add_turn(
        alice, [notes.id], user_input="I moved to Berlin", agent_response="ok", user_id="tom"
    )
    (other,) = engine.add_turn(
        alice, [notes.id], user_input="Я переехал в Berlin", agent_response="ok", user_id="ann"
    )
    browser = login(alice_key)
    page = browser.get(
        "/search", params={"memory": notes.id, "q": "Berlin", "similarity_threshold": "0"}
    )
    for shown in (turn, other):
        assert f'data-id="{shown.message_id}"' in page.text
    engine.usage.flush()  # uses are written in the background: wait for any to land
    engine.request_recorder.flush()
    for shown in (turn, other):
        stored, _ = engine.get_entry(alice, notes.id, shown.message_id)
        assert (stored.use_count, stored.last_used_at) == (0, None)
        assert engine.entry_reads(alice, notes.id, shown.message_id).returned == 0
    (tried,), _ = engine.request_log(alice, RequestQuery(route="/search"))
    assert tried.status == 200 and tried.entry_ids == ()  # logged, but returned nothing
    # an agent's search does count: the checks above can fail
    api = TestClient(app, headers={"Authorization": f"Bearer {alice_key}"})
    api.get("/api/v1/messages/search", params={"query": "Berlin", "memory_id": notes.id})
    engine.usage.flush()
    engine.request_recorder.flush()
    for shown in (turn, other):
        assert engine.get_entry(alice, notes.id, shown.message_id)[0].use_count == 1
        assert engine.entry_reads(alice, notes.id, shown.message_id).returned == 1


def test_the_playground_offers_every_declared_knob(login: Login, alice_key: str) -> None:
    """A knob declared on SearchRequest reaches the form without an edit here."""
    page = login(alice_key).get("/search")
    assert page.status_code == 200
    for spec in search_knobs():
        assert f'name="{spec.metadata["wire"]}"' in page.text, spec.name

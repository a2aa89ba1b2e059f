"""The web pages name their filters as REST does (issue 56: one name per filter in every
layer): the Messages, Facts and review pages' fields are the declared filters' wire names, and
their old short names (``user``, ``type``, ``agent``, ``session``) are still read, selecting
the same rows. Three users in one memory (one writing Russian, one Chinese) and a user of
another memory: what a filter leaves out is absent under either name."""

from __future__ import annotations

import re

import pytest
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

"""The Messages list's filters through REST and the SDK: user, exact session, extracted type,
status and forgotten. Each seeds turns the filter must leave out."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.support.api import API, Account, add_turn, create_memory, ok, seed_extract

from recallery import Client, Engine, MessageFilter

Sdk = Callable[[str | None], Client]


class Turns:
    """Four turns: u1/s1 with a semantic extract; u2/s1 disabled; u1/s2 forgotten; u2/s22."""

    def __init__(self, api: TestClient, engine: Engine, alice: Account) -> None:
        self.memory_id = str(create_memory(api, memory_type=["raw", "semantic"])["id"])

        def turn(text: str, user: str, session: str) -> dict[str, Any]:
            (written,) = add_turn(api, [self.memory_id], text, user_id=user, session_id=session)
            return written

        first = turn("tea in the morning", "u1", "s1")
        seed_extract(engine, first, "The user drinks tea.")
        self.extracted = first["message_id"]
        self.disabled = turn("coffee at noon", "u2", "s1")["message_id"]
        engine.set_status(alice.principal, self.memory_id, self.disabled, False)
        self.forgotten = turn("juice at night", "u1", "s2")["message_id"]
        engine.forget(alice.principal, self.memory_id, self.forgotten)
        self.other = turn("water always", "u2", "s22")["message_id"]


@pytest.fixture
def turns(as_alice: TestClient, engine: Engine, alice: Account) -> Turns:
    return Turns(as_alice, engine, alice)


def listed(api: TestClient, turns: Turns, **params: Any) -> set[int]:
    page = ok(api.get(f"{API}/memories/{turns.memory_id}", params=params))
    return {m["message_id"] for m in page["messages"]["message_list"]}


def test_rest_filters_the_messages_list(as_alice: TestClient, turns: Turns) -> None:
    everyone = {turns.extracted, turns.disabled, turns.forgotten, turns.other}
    assert listed(as_alice, turns) == everyone
    assert listed(as_alice, turns, user_id="u1") == {turns.extracted, turns.forgotten}
    assert listed(as_alice, turns, session_id="s1") == {turns.extracted, turns.disabled}
    assert listed(as_alice, turns, message_type="semantic") == {turns.extracted}
    assert listed(as_alice, turns, status="false") == {turns.disabled}
    assert turns.disabled not in listed(as_alice, turns, status="true")
    assert listed(as_alice, turns, forgotten="true") == {turns.forgotten}
    assert turns.forgotten not in listed(as_alice, turns, forgotten="false")
    assert listed(as_alice, turns, user_id="u2", session_id="s22") == {turns.other}


def test_a_bad_filter_value_names_its_field(as_alice: TestClient, turns: Turns) -> None:
    for field, value in (("status", "maybe"), ("message_type", "opinion")):
        response = as_alice.get(f"{API}/memories/{turns.memory_id}", params={field: value})
        assert response.status_code == 400
        assert response.json()["code"] == 101 and response.json()["data"]["field"] == field


def test_the_sdk_sends_the_same_filters(
    sdk: Sdk, alice: Account, engine: Engine, turns: Turns
) -> None:
    ms = sdk(alice.key)

    def ids(**filters: Any) -> set[int]:
        return {e.message_id for e in ms.list_messages(turns.memory_id, **filters).items}

    assert ids(user_id="u1") == {turns.extracted, turns.forgotten}
    assert ids(session_id="s1", status=False) == {turns.disabled}
    assert ids(types=["semantic"]) == {turns.extracted}
    assert ids(forgotten=True) == {turns.forgotten}
    page = ms.list_messages(turns.memory_id, user_id="u2")
    assert page == engine.list_messages(
        alice.principal, turns.memory_id, MessageFilter(user_id="u2")
    )

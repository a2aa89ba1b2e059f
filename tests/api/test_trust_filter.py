"""The ``trust`` filter through the adapters: REST ``trust`` on search, context and a memory's
Messages list, and the SDK's ``search``, ``context`` and ``list_messages``. Every state is
seeded beside the others (raw turns and an extracted entry), so a filter that is dropped on
the way, or one that lets rejected entries back into search, fails."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.support.api import API, Account, add_turn, create_memory, error, ok, seed_extract

from recallery import Client, Engine, InvalidInput, MessageFilter, Trust

Sdk = Callable[[str | None], Client]


class Seeded:
    """A memory holding one raw turn about tea in each trust state, and a confirmed extract
    of the unreviewed turn."""

    def __init__(self, api: TestClient, engine: Engine, alice: Account) -> None:
        self.memory = create_memory(api, memory_type=["raw", "semantic"])
        self.raw: dict[Trust, int] = {}
        for trust, text in [
            (Trust.CONFIRMED, "green tea every morning"),
            (Trust.UNREVIEWED, "green tea after lunch"),
            (Trust.REJECTED, "green tea before bed"),
        ]:
            (turn,) = add_turn(api, [self.memory_id], text)
            self.raw[trust] = turn["message_id"]
            if trust is Trust.UNREVIEWED:
                self.extract = seed_extract(engine, turn, "The user drinks green tea.")
            else:
                engine.review(alice.principal, self.memory_id, turn["message_id"], trust.value)
        engine.review(alice.principal, self.memory_id, self.extract, "confirmed")

    @property
    def memory_id(self) -> str:
        return str(self.memory["id"])

    @property
    def confirmed(self) -> set[int]:
        return {self.raw[Trust.CONFIRMED], self.extract}

    @property
    def unreviewed(self) -> set[int]:
        return {self.raw[Trust.UNREVIEWED]}


@pytest.fixture
def seeded(as_alice: TestClient, engine: Engine, alice: Account) -> Seeded:
    return Seeded(as_alice, engine, alice)


def searched(api: TestClient, seeded: Seeded, **params: Any) -> set[int]:
    query = {"query": "green tea", "memory_id": seeded.memory_id, "top_n": 10, **params}
    found = ok(api.get(f"{API}/messages/search", params={"similarity_threshold": 0, **query}))
    return {f["message_id"] for f in found}


# --- REST: search and context ---------------------------------------------------------------


def test_search_keeps_only_the_trust_states_sent(as_alice: TestClient, seeded: Seeded) -> None:
    assert searched(as_alice, seeded) == seeded.confirmed | seeded.unreviewed
    assert searched(as_alice, seeded, trust="confirmed") == seeded.confirmed
    assert searched(as_alice, seeded, trust="unreviewed") == seeded.unreviewed
    both = seeded.confirmed | seeded.unreviewed
    assert searched(as_alice, seeded, trust="confirmed,unreviewed") == both
    assert searched(as_alice, seeded, trust=["confirmed", "unreviewed"]) == both


@pytest.mark.parametrize("trust", ["rejected", "confirmed,rejected", "trusted"])
def test_search_refuses_rejected_and_unknown_states_naming_trust(
    as_alice: TestClient, seeded: Seeded, trust: str
) -> None:
    response = as_alice.get(
        f"{API}/messages/search",
        params={"query": "tea", "memory_id": seeded.memory_id, "trust": trust},
    )
    error(response, 400, 101)
    assert response.json()["data"]["field"] == "trust"


def test_context_takes_trust_as_a_query_parameter_and_in_the_body(
    as_alice: TestClient, seeded: Seeded
) -> None:
    search = {"query": "green tea", "memory_id": seeded.memory_id, "similarity_threshold": 0}
    got = ok(as_alice.get(f"{API}/messages/context", params={**search, "trust": "unreviewed"}))
    assert set(got["message_ids"]) == seeded.unreviewed
    for trust in (["confirmed"], "confirmed"):
        body = {**search, "memory_id": [seeded.memory_id], "trust": trust}
        got = ok(as_alice.post(f"{API}/messages/context", json=body))
        assert set(got["message_ids"]) == seeded.confirmed
    refused = as_alice.post(f"{API}/messages/context", json={**search, "trust": ["rejected"]})
    error(refused, 400, 101)
    assert refused.json()["data"]["field"] == "trust"


# --- REST: a memory's Messages list ---------------------------------------------------------


def listed(api: TestClient, seeded: Seeded, **params: Any) -> set[int]:
    found = ok(api.get(f"{API}/memories/{seeded.memory_id}", params=params))
    return {row["message_id"] for row in found["messages"]["message_list"]}


def test_the_messages_list_filters_raw_turns_by_trust_rejected_included(
    as_alice: TestClient, seeded: Seeded
) -> None:
    raw = seeded.raw
    assert listed(as_alice, seeded) == set(raw.values())
    assert listed(as_alice, seeded, trust="rejected") == {raw[Trust.REJECTED]}
    assert listed(as_alice, seeded, trust="unreviewed") == {raw[Trust.UNREVIEWED]}
    expected = {raw[Trust.CONFIRMED], raw[Trust.REJECTED]}
    assert listed(as_alice, seeded, trust=["confirmed", "rejected"]) == expected
    assert listed(as_alice, seeded, trust="confirmed,rejected") == expected
    page = ok(as_alice.get(f"{API}/memories/{seeded.memory_id}", params={"trust": "confirmed"}))
    assert page["messages"]["total_count"] == 1
    response = as_alice.get(f"{API}/memories/{seeded.memory_id}", params={"trust": "nobody"})
    error(response, 400, 101)
    assert response.json()["data"]["field"] == "trust"


# --- the SDK --------------------------------------------------------------------------------


def test_the_sdk_sends_trust_on_search_context_and_the_messages_list(
    sdk: Sdk, alice: Account, engine: Engine, seeded: Seeded
) -> None:
    ms = sdk(alice.key)
    memory_ids = [seeded.memory_id]

    def hits(trust: str | Iterable[str] | None) -> set[int]:
        found = ms.search("green tea", memory_ids, top_n=10, similarity_threshold=0, trust=trust)
        return {h.entry.message_id for h in found}

    assert hits(None) == seeded.confirmed | seeded.unreviewed
    assert hits(["confirmed"]) == seeded.confirmed
    assert hits((Trust.UNREVIEWED,)) == seeded.unreviewed
    assert hits("confirmed,unreviewed") == seeded.confirmed | seeded.unreviewed
    with pytest.raises(InvalidInput) as refused:
        hits("rejected")
    assert refused.value.field == "trust"

    block = ms.context("green tea", memory_ids, similarity_threshold=0, trust=["unreviewed"])
    assert set(block.message_ids) == seeded.unreviewed

    page = ms.list_messages(seeded.memory_id, trust=["rejected"])
    assert [e.message_id for e in page.items] == [seeded.raw[Trust.REJECTED]]
    assert page == engine.list_messages(
        alice.principal,
        seeded.memory_id,
        MessageFilter(trust="rejected"),  # type: ignore[arg-type]
    )
    confirmed = ms.list_messages(seeded.memory_id, trust="confirmed")
    assert [e.message_id for e in confirmed.items] == [seeded.raw[Trust.CONFIRMED]]

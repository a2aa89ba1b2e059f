"""A memory's budget over REST: ``PUT /memories/{id}`` with a ``memory_size`` below the bytes the
memory holds is refused unless ``evict=true`` asks for the eviction; the budget and the
forgetting policy are the owner's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.support.api import API, Account, add_turn, create_memory, error, ok

Http = Callable[[str | None], TestClient]


@pytest.fixture
def full(as_alice: TestClient, alice: Account, bob: Account) -> dict[str, Any]:
    """Alice's team memory with three turns; Bob is in her team."""
    memory = create_memory(as_alice, "budget", permissions="team")
    for text in ("first turn", "second turn", "third turn"):
        add_turn(as_alice, [memory["id"]], text)
    ok(as_alice.post(f"{API}/teams/{alice.id}/members", json={"user_id": bob.id}))
    return ok(as_alice.get(f"{API}/memories/{memory['id']}/config"))  # type: ignore[no-any-return]


def turns(client: TestClient, memory_id: str) -> list[int]:
    listed = ok(client.get(f"{API}/memories/{memory_id}"))["messages"]["message_list"]
    return sorted(int(m["message_id"]) for m in listed)


def evictions(client: TestClient, memory_id: str) -> list[dict[str, Any]]:
    query = {"memory_id": memory_id, "action": "entry.evict"}
    events: list[dict[str, Any]] = ok(client.get(f"{API}/audit", params=query))["events"]
    return events


def test_a_team_member_may_not_change_the_budget(
    full: dict[str, Any], as_alice: TestClient, http: Http, bob: Account
) -> None:
    as_bob = http(bob.key)
    before = turns(as_alice, full["id"])
    for change in ({"memory_size": 1}, {"forgetting_policy": "LRU"}):
        url = f"{API}/memories/{full['id']}"
        error(as_bob.put(url, params={"evict": "true"}, json=change), 403, 403)
    assert turns(as_alice, full["id"]) == before
    assert evictions(as_alice, full["id"]) == []
    config = ok(as_alice.get(f"{API}/memories/{full['id']}/config"))
    assert (config["memory_size"], config["forgetting_policy"]) == (full["memory_size"], "FIFO")


def test_the_owner_below_what_the_memory_holds_is_refused_without_evict(
    full: dict[str, Any], as_alice: TestClient
) -> None:
    small = full["used_bytes"] - 1
    response = as_alice.put(f"{API}/memories/{full['id']}", json={"memory_size": small})
    error(response, 400, 101)
    assert response.json()["data"]["field"] == "memory_size"
    assert "evict=true" in response.json()["message"]
    assert len(turns(as_alice, full["id"])) == 3
    assert ok(as_alice.get(f"{API}/memories/{full['id']}/config"))["memory_size"] == 5242880


def test_the_owner_with_evict_true_shrinks_the_memory_and_evicts_oldest_first(
    full: dict[str, Any], as_alice: TestClient
) -> None:
    before = turns(as_alice, full["id"])
    small = full["used_bytes"] - 1
    url = f"{API}/memories/{full['id']}"
    updated = ok(as_alice.put(url, params={"evict": "true"}, json={"memory_size": small}))
    assert updated["memory_size"] == small and updated["used_bytes"] <= small
    left = turns(as_alice, full["id"])
    assert len(left) < 3 and left == before[len(before) - len(left) :]  # FIFO: oldest go
    events = evictions(as_alice, full["id"])
    assert sorted(e["message_id"] for e in events) == before[: len(before) - len(left)]
    assert all(e["action"] == "entry.evict" for e in events)


def test_evict_must_be_a_boolean(full: dict[str, Any], as_alice: TestClient) -> None:
    url = f"{API}/memories/{full['id']}"
    response = as_alice.put(url, params={"evict": "maybe"}, json={"description": "x"})
    error(response, 400, 101)
    assert response.json()["data"]["field"] == "evict"
    assert ok(as_alice.put(url, params={"evict": "false"}, json={"description": "y"}))

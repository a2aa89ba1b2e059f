"""Whose fact, replayed through REST as a support agent would: three customers' turns written
into one memory, extracted by an OpenAI-compatible chat model that answers "supersedes" for
every judgement; then erasing one customer, with the receipt naming every entry and its user."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.extraction.test_whose_fact import TURNS, _reply
from tests.support.api import API, Account, error, ok, replay, support_memory
from tests.support.extraction import replying

from recallery import Engine
from recallery.store.base import Store
from recallery.testing import DeterministicEmbedder, FrozenClock


@pytest.fixture
def engine(store: Store, embedder: DeterministicEmbedder, clock: FrozenClock) -> Iterator[Engine]:
    with replying(_reply, store, embedder, clock) as e:
        yield e


def _rows(client: TestClient, memory_id: str) -> list[dict[str, Any]]:
    listed = ok(client.get(f"{API}/memories/{memory_id}", params={"page_size": 100}))
    return [m for m in listed["messages"]["message_list"]]


def test_erasing_ana_over_rest_changes_only_anas_entries(
    engine: Engine,
    http: Callable[[str | None], TestClient],
    alice: Account,
    clock: FrozenClock,
) -> None:
    client = http(alice.key)
    memory_id = support_memory(client)
    replay(engine, client, memory_id, clock, TURNS)
    before = {
        (m["message_id"], m["user_id"]) for m in _rows(client, memory_id) if m["user_id"] != "ana"
    }
    preview = ok(client.post(f"{API}/subjects/ana/erase", json={}))
    (share,) = preview["memories"]
    assert share["items"] and {i["user_id"] for i in share["items"]} == {"ana"}
    assert preview["count"] == len(share["items"])
    # a stale token changes nothing
    stale = "0" * 32
    assert "changed since the dry run" in error(
        client.post(f"{API}/subjects/ana/erase", json={"dry_run": False, "token": stale}),
        409,
        409,
    )
    done = ok(
        client.post(f"{API}/subjects/ana/erase", json={"dry_run": False, "token": preview["token"]})
    )
    assert done["memories"] == preview["memories"]
    after = {(m["message_id"], m["user_id"]) for m in _rows(client, memory_id)}
    assert after == before


def test_only_an_administrator_reaches_every_tenant(
    engine: Engine,
    http: Callable[[str | None], TestClient],
    admin: Account,
    alice: Account,
    bob: Account,
    clock: FrozenClock,
) -> None:
    alices, bobs = http(alice.key), http(bob.key)
    mine, theirs = support_memory(alices), support_memory(bobs)
    for client, memory_id in ((alices, mine), (bobs, theirs)):
        turn = {"memory_id": [memory_id], "user_id": "ana", "user_input": "我住在巴伦西亚。"}
        turn |= {"agent_id": "a", "session_id": "s", "agent_response": "好的"}
        ok(client.post(f"{API}/messages", json=turn))
    body = {"everywhere": True}
    assert "administrator" in error(alices.post(f"{API}/subjects/ana/erase", json=body), 403, 403)
    operator = http(admin.key)
    preview = ok(operator.post(f"{API}/subjects/ana/erase", json=body))
    tenants = {m["tenant_id"] for m in preview["memories"]}
    assert tenants == {alice.user.id, bob.user.id}
    done = ok(
        operator.post(
            f"{API}/subjects/ana/erase",
            json={**body, "dry_run": False, "token": preview["token"]},
        )
    )
    assert done["count"] == 2
    for client, memory_id in ((alices, mine), (bobs, theirs)):
        assert not _rows(client, memory_id)
        events = ok(client.get(f"{API}/audit", params={"memory_id": memory_id}))
        erased = [e for e in events["events"] if e["action"] == "entry.erase"]
        assert [e["actor"] for e in erased] == [admin.user.id]


def test_a_key_without_read_cannot_list_a_users_entries(
    engine: Engine,
    http: Callable[[str | None], TestClient],
    alice: Account,
) -> None:
    client = http(alice.key)
    memory_id = support_memory(client)
    turn = {"memory_id": [memory_id], "user_id": "tom", "user_input": "I live in Manchester."}
    turn |= {"agent_id": "a", "session_id": "s", "agent_response": "ok"}
    ok(client.post(f"{API}/messages", json=turn))
    _, key = engine.create_api_key(alice.principal, alice.user.id, capabilities=["write"])
    writer = http(key)
    message = error(writer.post(f"{API}/subjects/tom/forget", json={}), 403, 403)
    assert "'read'" in message
    assert len(_rows(client, memory_id)) == 1

"""What a key learns from the answers of the routes it may call: content only with ``read``
(a verdict, a correction and a bulk change answer a key without it with ids, state and
counts), and a filter, which is a read, needs ``read`` to select by."""

from __future__ import annotations

from collections.abc import Callable

from fastapi.testclient import TestClient
from tests.support.api import API, Account, add_turn, create_memory, error, ok

from recallery import Engine


def _key(engine: Engine, owner: Account, *capabilities: str) -> str:
    _, key = engine.create_api_key(owner.principal, owner.id, capabilities=list(capabilities))
    return key


def test_a_manage_only_key_reviews_without_reading_the_entry(
    as_alice: TestClient, http: Callable[[str | None], TestClient], alice: Account, engine: Engine
) -> None:
    m = create_memory(as_alice)
    (t,) = add_turn(as_alice, [m["id"]], "the vault code is 4471")
    manager = http(_key(engine, alice, "manage"))
    url = f"{API}/messages/{m['id']}:{t['message_id']}/review"
    for _ in range(2):  # a repeated verdict answers the same way, and is audited
        answer = manager.post(url, json={"verdict": "confirmed"})
        assert answer.status_code == 200 and "4471" not in answer.text
        assert answer.json()["data"]["trust"] == "confirmed"
    events = ok(
        as_alice.get(f"{API}/audit", params={"memory_id": m["id"], "action": "entry.confirm"})
    )
    assert len(events["events"]) == 2
    assert "4471" in as_alice.post(url, json={"verdict": "confirmed"}).text


def test_a_write_only_key_cannot_select_by_filter(
    as_alice: TestClient, http: Callable[[str | None], TestClient], alice: Account, engine: Engine
) -> None:
    m = create_memory(as_alice)
    (t,) = add_turn(as_alice, [m["id"]], "said by carol", user_id="carol")
    writer = http(_key(engine, alice, "write"))
    url = f"{API}/memories/{m['id']}/bulk"
    refused = writer.post(url, json={"action": "disable", "filter": {"user_id": "carol"}})
    assert "'read' capability" in error(refused, 403, 403)
    by_id = ok(writer.post(url, json={"action": "disable", "message_ids": [t["message_id"]]}))
    assert (by_id["count"], by_id["changed"]) == (1, [])

"""Reinstating a retired version over REST and the SDK (issue 40 item 5): the answer, the
stored state and the audit event; refused for a key without ``manage``."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from fastapi.testclient import TestClient
from tests.support.api import API, EMBD, LLM, Account, add_turn, create_memory, error, ok

from recallery import Client, Engine, Forbidden


def test_reinstate_over_rest(
    as_alice: TestClient,
    alice: Account,
    engine: Engine,
    http: Callable[[str | None], TestClient],
) -> None:
    memory = create_memory(as_alice)
    (raw,) = add_turn(as_alice, [memory["id"]], "office in Paris")
    old = f"{API}/messages/{memory['id']}:{raw['message_id']}"
    new = ok(as_alice.post(f"{old}/correct", json={"content": "office in Lyon"}))
    body = {"name": "writer", "capabilities": ["read", "write"]}
    writer = http(ok(as_alice.post(f"{API}/users/{alice.id}/keys", json=body))["key"])
    assert "'manage' capability" in error(
        writer.post(f"{old}/reinstate", json={"reason": "wrong"}), 403, 403
    )
    assert "reason" in error(as_alice.post(f"{old}/reinstate", json={}), 400, 101)

    back = ok(as_alice.post(f"{old}/reinstate", json={"reason": "Lyon was a typo"}))

    assert back["message_id"] == raw["message_id"] and back["retired_at"] is None
    newer = ok(as_alice.get(f"{API}/messages/{memory['id']}:{new['message_id']}/content"))
    assert newer["retired_at"] is not None and newer["superseded_by"] == raw["message_id"]
    events = engine.audit_log(
        alice.principal, memory_id=memory["id"], action="entry.reinstate"
    ).items
    assert [(e.message_id, e.reason) for e in events] == [(raw["message_id"], "Lyon was a typo")]
    assert "current already" in error(
        as_alice.post(f"{old}/reinstate", json={"reason": "again"}), 409, 409
    )


def test_reinstate_through_the_sdk(sdk: Callable[[str | None], Client], alice: Account) -> None:
    ms = sdk(alice.key)
    memory = ms.create_memory("notes", ["raw"], EMBD, LLM)
    (entry,) = ms.add_turn([memory.id], user_input="office in Paris", agent_response="ok")
    new = ms.correct(memory.id, entry.message_id, "office in Lyon")
    back = ms.reinstate(memory.id, entry.message_id, "typo")
    assert back.message_id == entry.message_id and back.retired_at is None
    assert ms.get_entry(memory.id, new.message_id)[0].superseded_by == entry.message_id
    _, key = ms.create_api_key(alice.id, name="reader", capabilities=["read"])
    with pytest.raises(Forbidden, match="'manage' capability"):
        sdk(key).reinstate(memory.id, new.message_id, "x")

"""Key capabilities over REST, the SDK and the command line: a read-only key searches, and
every write it tries is a 403 naming the capability, with nothing changed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from tests.support.api import API, Account, add_turn, create_memory, error, ok

from recallery import Client, Engine, Forbidden
from recallery.cli import main
from recallery.models import Capability


def _read_only(as_alice: TestClient, alice: Account) -> str:
    body = {"name": "agent", "capabilities": ["read"]}
    created = ok(as_alice.post(f"{API}/users/{alice.id}/keys", json=body))
    key: str = created["key"]
    return key


def test_read_only_key_over_rest(
    as_alice: TestClient, alice: Account, http: Callable[[str | None], TestClient]
) -> None:
    memory = create_memory(as_alice)
    (raw,) = add_turn(as_alice, [memory["id"]], "I moved to Berlin last spring.")
    reader = http(_read_only(as_alice, alice))
    assert ok(reader.get(f"{API}/users/me"))["capabilities"] == ["read"]
    found = ok(
        reader.get(f"{API}/messages/search", params={"query": "Berlin", "memory_id": memory["id"]})
    )
    assert [h["message_id"] for h in found] == [raw["message_id"]]

    entry = f"{API}/messages/{memory['id']}:{raw['message_id']}"
    turn = {
        "memory_id": [memory["id"]],
        "agent_id": "a",
        "session_id": "s",
        "user_input": "I moved to Rome.",
        "agent_response": "ok",
    }
    refused = [
        reader.post(f"{API}/messages", json=turn),
        reader.request("DELETE", entry, json={}),
        reader.post(f"{entry}/correct", json={"content": "I moved to Rome."}),
    ]
    for response in refused:
        assert "'write' capability" in error(response, 403, 403)
    assert "'manage' capability" in error(reader.post(f"{entry}/erase", json={}), 403, 403)

    page = ok(as_alice.get(f"{API}/memories/{memory['id']}"))
    assert [m["message_id"] for m in page["messages"]["message_list"]] == [raw["message_id"]]
    content = ok(as_alice.get(f"{entry}/content"))
    assert "Berlin" in content["content"] and content["forget_at"] is None
    assert len(ok(as_alice.get(f"{entry}/history"))) == 1


def test_unknown_capability_is_a_400(as_alice: TestClient, alice: Account) -> None:
    before = ok(as_alice.get(f"{API}/users/{alice.id}/keys"))
    body = {"capabilities": ["read", "root"]}
    assert "root" in error(as_alice.post(f"{API}/users/{alice.id}/keys", json=body), 400, 101)
    assert ok(as_alice.get(f"{API}/users/{alice.id}/keys")) == before


def test_sdk_creates_a_limited_key(
    sdk: Callable[[str | None], Client], alice: Account, engine: Engine
) -> None:
    ms = sdk(alice.key)
    memory = ms.create_memory(
        "notes", ["raw"], "BAAI/bge-small-en-v1.5@Builtin", "glm-4-flash@ZHIPU-AI"
    )
    _, key = ms.create_api_key(alice.id, name="agent", capabilities=["read", "write"])
    agent = sdk(key)
    assert agent.me().capabilities == frozenset({Capability.READ, Capability.WRITE})
    (raw,) = agent.add_turn([memory.id], user_input="I like tea.", agent_response="ok")
    with pytest.raises(Forbidden, match="'manage' capability"):
        agent.erase(memory.id, raw.message_id)
    assert engine.get_entry(alice.principal, memory.id, raw.message_id)[0].content.endswith("ok")


def test_cli_creates_a_limited_key(tmp_path: Path) -> None:
    runner = CliRunner()
    args = ["--data-dir", str(tmp_path)]
    assert runner.invoke(main, ["user", "create", "alice", *args]).exit_code == 0
    out = runner.invoke(
        main, ["key", "create", "--user", "alice", "--capability", "read", *args]
    ).output
    key = out.split("key:    ")[1].strip()
    with Engine.open(tmp_path) as engine:
        assert engine.authenticate(key).capabilities == frozenset({Capability.READ})
    bad = runner.invoke(main, ["key", "create", "--user", "alice", "--capability", "root", *args])
    assert bad.exit_code == 2 and "root" in bad.output

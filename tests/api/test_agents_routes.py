"""The agents' routes over REST and the SDK: stated entries (reconciled) and a turn's task."""

from __future__ import annotations

from collections.abc import Callable

from fastapi.testclient import TestClient
from tests.support.api import API, Account, add_turn, create_memory, error, ok

from recallery import Client
from recallery.requests import EntryInput


def _semantic_hits(api: TestClient, memory_id: str, query: str) -> list[str]:
    params = {"query": query, "memory_id": memory_id, "message_type": "semantic"}
    return [h["content"] for h in ok(api.get(f"{API}/messages/search", params=params))]


def test_stated_entries_over_rest(
    as_alice: TestClient, alice: Account, bob: Account, http: Callable[[str | None], TestClient]
) -> None:
    memory = create_memory(as_alice, memory_type=["raw", "semantic"])
    (turn,) = add_turn(as_alice, [memory["id"]], "I live in Lisbon.")
    url = f"{API}/memories/{memory['id']}/entries"
    body = {"entries": [{"content": "The user lives in Lisbon"}], "source_id": turn["message_id"]}
    first = ok(as_alice.post(url, json=body))
    assert first["counts"] == {"add": 1, "supersede": 0, "duplicate": 0, "suppress": 0}
    fact = first["outcomes"][0]["message_id"]
    again = ok(as_alice.post(url, json=body))  # the same person says it again
    assert again["outcomes"][0]["action"] == "duplicate"
    assert again["outcomes"][0]["message_id"] == fact
    assert _semantic_hits(as_alice, memory["id"], "Lisbon") == ["The user lives in Lisbon"]
    # the same words about another end user are theirs, never a repeat of this one's
    other = {"entries": [{"content": "The user lives in Lisbon"}], "user_id": "ana"}
    theirs = ok(as_alice.post(url, json=other))["outcomes"][0]
    assert theirs["action"] == "add" and theirs["message_id"] != fact

    assert "not found" in error(http(bob.key).post(url, json=body), 404, 404)
    created = ok(as_alice.post(f"{API}/users/{alice.id}/keys", json={"capabilities": ["read"]}))
    reader_key = created["key"]
    refused = http(reader_key).post(url, json={"entries": [{"content": "The user lives in Rome"}]})
    assert "'write' capability" in error(refused, 403, 403)
    assert "entries" in error(as_alice.post(url, json={}), 400, 101)
    assert _semantic_hits(as_alice, memory["id"], "user lives") == ["The user lives in Lisbon"] * 2


def test_sdk_states_entries_and_reads_a_turns_task(
    sdk: Callable[[str | None], Client], alice: Account, bob: Account
) -> None:
    ms = sdk(alice.key)
    memory = ms.create_memory(
        "notes", ["raw", "semantic"], "BAAI/bge-small-en-v1.5@Builtin", "glm-4-flash@ZHIPU-AI"
    )
    result = ms.add_entries(memory.id, [EntryInput("The user likes green tea")], user_id="u-1")
    (outcome,) = result.outcomes
    assert outcome.action == "add" and outcome.message_id is not None
    hits = ms.search("green tea", [memory.id], types=["semantic"])
    assert [(h.entry.content, h.entry.user_id) for h in hits] == [
        ("The user likes green tea", "u-1")
    ]

    (raw,) = ms.add_turn([memory.id], user_input="I like tea.", agent_response="ok")
    job = ms.task_status(memory.id, raw.message_id)
    assert job is not None and (job.message_id, job.kind) == (raw.message_id, "extraction")
    plain = ms.create_memory("plain", ["raw"], "BAAI/bge-small-en-v1.5@Builtin", "x@Y")
    (quiet,) = ms.add_turn([plain.id], user_input="hello", agent_response="ok")
    assert ms.task_status(plain.id, quiet.message_id) is None
    try:
        sdk(bob.key).task_status(memory.id, raw.message_id)
    except KeyError as exc:  # NotFound
        assert "not found" in str(exc)
    else:
        raise AssertionError("bob read alice's task")

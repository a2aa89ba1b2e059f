"""RAGFlow's memory routes (reference 1.1–1.6): shapes, validation messages, paging, filters."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from fastapi.testclient import TestClient
from tests.support.api import (
    API,
    EMBD,
    LLM,
    Account,
    add_turn,
    create_memory,
    error,
    ok,
    seed_extract,
)

from recallery import Engine
from recallery.testing import FrozenClock

MEMORY_FIELDS = {
    "id",
    "name",
    "avatar",
    "tenant_id",
    "owner_name",
    "memory_type",
    "storage_type",
    "embd_id",
    "llm_id",
    "permissions",
    "description",
    "memory_size",
    "forgetting_policy",
    "temperature",
    "system_prompt",
    "user_prompt",
    "create_time",
    "create_date",
    "update_time",
    "update_date",
}
LIST_ITEM_FIELDS = {
    "id",
    "name",
    "avatar",
    "tenant_id",
    "owner_name",
    "memory_type",
    "storage_type",
    "embd_id",
    "llm_id",
    "embd_name",
    "permissions",
    "description",
    "create_time",
    "create_date",
}


def audit_actions(engine: Engine, memory_id: str) -> list[str]:
    with engine.store.read() as r:
        rows = r.conn.execute(
            "SELECT action FROM audit WHERE memory_id = ? ORDER BY id", [memory_id]
        )
    return [str(row[0]) for row in rows]


def memory_count(engine: Engine) -> int:
    with engine.store.read() as r:
        return int(r.conn.execute("SELECT count(*) FROM memories")[0][0])


# --- 1.1 create ----------------------------------------------------------------------------


def test_create_answers_the_memory_object_and_stores_it(
    as_alice: TestClient, alice: Account, engine: Engine, clock: FrozenClock
) -> None:
    response = as_alice.post(
        f"{API}/memories",
        json={
            "name": "  Trip ",
            "memory_type": ["raw", "semantic"],
            "embd_id": EMBD,
            "llm_id": LLM,
        },
    )
    body = response.json()
    assert (response.status_code, body["code"], body["message"]) == (200, 0, True)
    m = body["data"]
    assert set(m) >= MEMORY_FIELDS
    assert (m["name"], m["memory_type"], m["tenant_id"], m["owner_name"]) == (
        "Trip",
        ["raw", "semantic"],
        alice.id,
        "alice",
    )
    assert (m["permissions"], m["memory_size"], m["forgetting_policy"], m["temperature"]) == (
        "me",
        5242880,
        "FIFO",
        0.5,
    )
    assert m["storage_type"] == "table"
    assert m["create_time"] == int(clock.now().timestamp() * 1000)
    assert m["create_date"] == clock.now().strftime("%Y-%m-%d %H:%M:%S")
    assert "semantic" in m["system_prompt"]
    assert ok(as_alice.get(f"{API}/memories/{m['id']}/config"))["name"] == "Trip"
    assert audit_actions(engine, m["id"]) == ["memory.create"]


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        (
            {"name": "x"},
            "memory_type",
            "required argument are missing: memory_type,embd_id,llm_id; ",
        ),
        (
            {"name": " ", "memory_type": ["raw"], "embd_id": EMBD, "llm_id": LLM},
            "name",
            "Memory name cannot be empty or whitespace.",
        ),
        (
            {"name": "n" * 129, "memory_type": ["raw"], "embd_id": EMBD, "llm_id": LLM},
            "name",
            f"Memory name '{'n' * 129}' exceeds limit of 128.",
        ),
        (
            {"name": "n", "memory_type": "raw", "embd_id": EMBD, "llm_id": LLM},
            "memory_type",
            "Memory type must be a list.",
        ),
        (
            {"name": "n", "memory_type": ["raw", "graph"], "embd_id": EMBD, "llm_id": LLM},
            "memory_type",
            "Memory type '{'graph'}' is not supported.",
        ),
    ],
)
def test_create_rejects_bad_fields_with_ragflow_messages(
    as_alice: TestClient, engine: Engine, body: dict[str, object], field: str, message: str
) -> None:
    response = as_alice.post(f"{API}/memories", json=body)
    assert error(response, 400, 101) == message
    assert response.json()["data"]["field"] == field
    assert memory_count(engine) == 0


def test_create_without_a_body_lists_every_required_field(as_alice: TestClient) -> None:
    message = error(as_alice.post(f"{API}/memories"), 400, 101)
    assert message == "required argument are missing: name,memory_type,embd_id,llm_id; "


def test_an_embedding_model_that_cannot_be_resolved_is_refused_naming_embd_id(
    as_alice: TestClient, engine: Engine
) -> None:
    body = {"name": "n", "memory_type": ["raw"], "embd_id": "bge-m3@Nowhere", "llm_id": LLM}
    response = as_alice.post(f"{API}/memories", json=body)
    message = error(response, 400, 101)
    assert response.json()["data"]["field"] == "embd_id"
    assert "bge-m3@Nowhere" in message and "nowhere" in message
    assert memory_count(engine) == 0


def test_a_chat_model_of_an_unconfigured_provider_is_accepted(as_alice: TestClient) -> None:
    assert create_memory(as_alice, llm_id="some-model@NotConfigured")["llm_id"] == (
        "some-model@NotConfigured"
    )


def test_builtin_embedder_answers_to_any_model_name(as_alice: TestClient) -> None:
    m = create_memory(as_alice, embd_id="whatever-model@Builtin")
    add_turn(as_alice, [m["id"]], "the builtin provider embeds this")
    assert ok(as_alice.get(f"{API}/memories/{m['id']}/config"))["entry_count"] == 1


def test_names_are_deduplicated_per_owner(
    as_alice: TestClient, http: Callable[[str | None], TestClient], bob: Account
) -> None:
    names = [create_memory(as_alice, "notes")["name"] for _ in range(3)]
    assert names == ["notes", "notes(1)", "notes(2)"]
    assert create_memory(http(bob.key), "notes")["name"] == "notes"


def test_create_accepts_configuration_options(as_alice: TestClient) -> None:
    m = create_memory(as_alice, permissions="team", description="shared", memory_size=4096)
    assert (m["permissions"], m["description"], m["memory_size"]) == ("team", "shared", 4096)


# --- 1.2 update ----------------------------------------------------------------------------


def test_update_changes_only_the_keys_sent(
    as_alice: TestClient, engine: Engine, clock: FrozenClock
) -> None:
    m = create_memory(as_alice, description="before")
    clock.advance(minutes=5)
    body = {"temperature": 0.2, "permissions": "team", "tenant_llm_id": "ignored"}
    updated = ok(as_alice.put(f"{API}/memories/{m['id']}", json=body))
    assert (updated["temperature"], updated["permissions"], updated["description"]) == (
        0.2,
        "team",
        "before",
    )
    assert updated["update_time"] > m["update_time"]
    assert audit_actions(engine, m["id"]) == ["memory.create", "memory.update"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"permissions": "all"}, "Unknown permission 'all'."),
        ({"memory_size": 10485761}, "Memory size should be in range (0, 10485760] Bytes."),
        ({"forgetting_policy": "fifo"}, "Forgetting policy 'fifo' is not supported."),
        ({"temperature": 1.5}, "Temperature should be in range [0, 1]."),
        ({"memory_type": ["raw", "x"]}, "Memory type '{'x'}' is not supported."),
        ({"name": ""}, "Memory name cannot be empty or whitespace."),
    ],
)
def test_update_rejects_bad_values_and_changes_nothing(
    as_alice: TestClient, body: dict[str, object], message: str
) -> None:
    m = create_memory(as_alice)
    assert error(as_alice.put(f"{API}/memories/{m['id']}", json=body), 400, 101) == message
    assert ok(as_alice.get(f"{API}/memories/{m['id']}/config"))["update_time"] == m["update_time"]


def test_embedding_model_and_types_lock_once_the_memory_holds_entries(as_alice: TestClient) -> None:
    m = create_memory(as_alice)
    add_turn(as_alice, [m["id"]], "hello")
    response = as_alice.put(f"{API}/memories/{m['id']}", json={"embd_id": "other@Builtin"})
    assert error(response, 400, 101) == "Can't update ['embd_id'] when memory isn't empty."
    response = as_alice.put(f"{API}/memories/{m['id']}", json={"memory_type": ["raw", "semantic"]})
    assert error(response, 400, 101) == "Can't update ['memory_type'] when memory isn't empty."
    assert ok(as_alice.put(f"{API}/memories/{m['id']}", json={"llm_id": "gpt@OpenAI"}))


def test_update_of_a_missing_memory_is_404(as_alice: TestClient) -> None:
    missing = "0" * 32
    response = as_alice.put(f"{API}/memories/{missing}", json={"name": "x"})
    assert error(response, 404, 404) == f"Memory '{missing}' not found."
    assert error(as_alice.put(f"{API}/memories/not-an-id", json={}), 404, 404) == (
        "Memory 'not-an-id' not found."
    )


# --- 1.3 delete ----------------------------------------------------------------------------


def test_delete_removes_the_memory_and_its_messages(as_alice: TestClient, engine: Engine) -> None:
    m = create_memory(as_alice)
    keep = create_memory(as_alice, "keep")
    add_turn(as_alice, [m["id"], keep["id"]], "text in both")
    response = as_alice.delete(f"{API}/memories/{m['id']}")
    assert response.json() == {"code": 0, "message": True, "data": None}
    assert error(as_alice.get(f"{API}/memories/{m['id']}/config"), 404, 404)
    with engine.store.read() as r:
        left = r.conn.execute("SELECT DISTINCT memory_id FROM entries")
    assert [row[0] for row in left] == [keep["id"]]
    assert error(as_alice.delete(f"{API}/memories/{m['id']}"), 404, 404)


# --- 1.4 list ------------------------------------------------------------------------------


def test_list_items_have_ragflow_fields_and_owner_names(as_alice: TestClient) -> None:
    create_memory(as_alice, "a")
    data = ok(as_alice.get(f"{API}/memories"))
    assert data["total_count"] == 1
    (item,) = data["memory_list"]
    assert set(item) == LIST_ITEM_FIELDS
    assert (item["owner_name"], item["embd_name"]) == ("alice", "BAAI/bge-small-en-v1.5")


def test_list_filters_exclude_what_does_not_match(
    as_alice: TestClient, http: Callable[[str | None], TestClient], bob: Account, alice: Account
) -> None:
    trip = create_memory(as_alice, "Trip notes", memory_type=["raw", "episodic"])
    recipes = create_memory(as_alice, "recipes")
    as_bob = http(bob.key)
    shared = create_memory(as_bob, "bob shared", permissions="team")
    create_memory(as_bob, "bob private")
    ok(as_bob.post(f"{API}/teams/{bob.id}/members", json={"user_id": alice.id}))

    def names(**params: object) -> list[str]:
        data = ok(as_alice.get(f"{API}/memories", params=params))
        return sorted(m["name"] for m in data["memory_list"])

    assert names() == ["Trip notes", "bob shared", "recipes"]
    assert names(keywords="TRIP") == ["Trip notes"]
    assert names(memory_type="episodic,procedural") == ["Trip notes"]
    assert names(memory_type="raw") == ["Trip notes", "bob shared", "recipes"]
    assert names(storage_type="graph") == []
    assert names(tenant_id=bob.id) == ["bob shared"]
    assert names(owner_ids=f"{alice.id},{bob.id}") == ["Trip notes", "bob shared", "recipes"]
    assert names(ids=f"{trip['id']},{shared['id']}") == ["Trip notes", "bob shared"]
    assert names(ids=recipes["id"], keywords="trip") == []


def test_list_pages_and_sizes_follow_ragflow(as_alice: TestClient, clock: FrozenClock) -> None:
    for i in range(3):
        clock.advance(minutes=1)
        create_memory(as_alice, f"m{i}")

    def page(**params: object) -> list[str]:
        return [
            m["name"] for m in ok(as_alice.get(f"{API}/memories", params=params))["memory_list"]
        ]

    assert page(page=1, page_size=2) == ["m2", "m1"]
    assert page(page=2, page_size=2) == ["m0"]
    assert page(page=0, page_size=2) == page(page="x", page_size=2) == ["m2", "m1"]
    assert page(page_size=0) == page(page_size="many") == ["m2", "m1", "m0"]
    message = error(as_alice.get(f"{API}/memories", params={"page_size": 101}), 400, 101)
    assert message == "page_size must be less than or equal to 100"


# --- 1.5 config ----------------------------------------------------------------------------


def test_config_returns_the_full_object(as_alice: TestClient) -> None:
    m = create_memory(as_alice, user_prompt="custom")
    data = ok(as_alice.get(f"{API}/memories/{m['id']}/config"))
    assert set(data) >= MEMORY_FIELDS
    assert (data["owner_name"], data["user_prompt"]) == ("alice", "custom")
    assert error(as_alice.get(f"{API}/memories/{'f' * 32}/config"), 404, 404) == (
        f"Memory '{'f' * 32}' not found."
    )


# --- 1.6 message list ----------------------------------------------------------------------


def test_message_list_pages_raw_turns_with_extracts_and_tasks(
    as_alice: TestClient, engine: Engine, clock: FrozenClock
) -> None:
    m = create_memory(as_alice, memory_type=["raw", "semantic"])
    first = add_turn(as_alice, [m["id"]], "I live in Lyon")[0]
    clock.advance(minutes=1)
    second = add_turn(as_alice, [m["id"]], "I like tea")[0]
    fact = seed_extract(engine, first, "The user lives in Lyon.")
    data = ok(as_alice.get(f"{API}/memories/{m['id']}"))
    assert set(data) == {"messages", "storage_type"}
    assert data["storage_type"] == "table"
    assert data["messages"]["total_count"] == 2
    rows = data["messages"]["message_list"]
    assert [r["message_id"] for r in rows] == [second["message_id"], first["message_id"]]
    assert [x["message_id"] for x in rows[1]["extract"]] == [fact]
    assert rows[1]["extract"][0]["source_id"] == first["message_id"]
    assert rows[0]["extract"] == []
    task = rows[1]["task"]
    assert {"id", "doc_id", "from_page", "progress", "progress_msg", "digest", "chunk_ids"} <= set(
        task
    )
    assert (task["doc_id"], task["digest"], task["progress"]) == (
        m["id"],
        str(first["message_id"]),
        0,
    )
    assert task["create_time"] == int(engine.clock.now().timestamp() * 1000) - 60_000
    assert "Task has been received." in task["progress_msg"]
    assert rows[0]["agent_name"] == "agent-1"


def test_message_list_of_a_raw_only_memory_has_no_tasks(as_alice: TestClient) -> None:
    m = create_memory(as_alice)
    add_turn(as_alice, [m["id"]], "hello")
    (row,) = ok(as_alice.get(f"{API}/memories/{m['id']}"))["messages"]["message_list"]
    assert row["task"] == {}


def test_message_list_filters_by_agent_and_session_substring(as_alice: TestClient) -> None:
    m = create_memory(as_alice)
    add_turn(as_alice, [m["id"]], "one", agent_id="planner", session_id="trip-2026")
    add_turn(as_alice, [m["id"]], "two", agent_id="coder", session_id="bugfix-7")
    add_turn(as_alice, [m["id"]], "three", agent_id="critic", session_id="trip-2025")

    def agents(**params: object) -> list[str]:
        rows = ok(as_alice.get(f"{API}/memories/{m['id']}", params=params))["messages"]
        return sorted(r["agent_id"] for r in rows["message_list"])

    assert agents(agent_id="planner,coder") == ["coder", "planner"]
    assert agents(agent_id=["planner", "critic"]) == ["critic", "planner"]
    assert agents(keywords="TRIP") == ["critic", "planner"]
    assert agents(keywords="trip", agent_id="critic") == ["critic"]


def test_message_list_keeps_forgotten_and_disabled_turns(as_alice: TestClient) -> None:
    m = create_memory(as_alice)
    a, b = (add_turn(as_alice, [m["id"]], t)[0] for t in ("a", "b"))
    ok(as_alice.delete(f"{API}/messages/{m['id']}:{a['message_id']}"))
    ok(as_alice.put(f"{API}/messages/{m['id']}:{b['message_id']}", json={"status": False}))
    rows = ok(as_alice.get(f"{API}/memories/{m['id']}"))["messages"]["message_list"]
    states = {r["message_id"]: (r["forget_at"] is not None, r["status"]) for r in rows}
    assert states == {a["message_id"]: (True, True), b["message_id"]: (False, False)}


def test_message_list_pages(as_alice: TestClient, clock: FrozenClock) -> None:
    m = create_memory(as_alice)
    ids = []
    for i in range(3):
        clock.advance(seconds=1)
        ids.append(add_turn(as_alice, [m["id"]], f"turn {i}")[0]["message_id"])
    url = f"{API}/memories/{m['id']}"

    def page(**params: object) -> list[int]:
        rows = ok(as_alice.get(url, params=params))["messages"]["message_list"]
        return [r["message_id"] for r in rows]

    assert page(page=2, page_size=2) == [ids[0]]
    assert page(page=-1, page_size=2) == [ids[2], ids[1]]
    assert page(page_size="0") == ids[::-1]
    assert error(as_alice.get(url, params={"page_size": 500}), 400, 101) == (
        "page_size must be less than or equal to 100"
    )
    assert error(as_alice.get(f"{API}/memories/{'a' * 32}"), 404, 404)

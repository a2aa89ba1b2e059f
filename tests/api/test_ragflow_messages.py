"""RAGFlow's message routes (reference 1.7–1.12): add, search, recent, forget, status, content."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.support.api import API, Account, add_turn, create_memory, error, ok, seed_extract

from recallery import Engine
from recallery.testing import FrozenClock

MESSAGE_FIELDS = {
    "message_id",
    "message_type",
    "source_id",
    "memory_id",
    "user_id",
    "agent_id",
    "session_id",
    "valid_at",
    "invalid_at",
    "forget_at",
    "status",
    "content",
    "trust",
    "origin",
    "recorded_at",
    "retired_at",
    "supersedes",
    "superseded_by",
}


def search(
    api: TestClient, query: str, memory_ids: list[str], **params: Any
) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = ok(
        api.get(
            f"{API}/messages/search", params={"query": query, "memory_id": memory_ids, **params}
        )
    )
    return found


def contents(found: list[dict[str, Any]]) -> list[str]:
    return [f["content"].split("\n")[0].removeprefix("User Input: ") for f in found]


def entry_rows(engine: Engine) -> int:
    with engine.store.read() as r:
        return int(r.conn.execute("SELECT count(*) FROM entries")[0][0])


# --- 1.7 add -------------------------------------------------------------------------------


def test_add_answers_ragflow_text_and_stores_one_raw_entry_per_memory(
    as_alice: TestClient, alice: Account, engine: Engine, clock: FrozenClock
) -> None:
    a, b = create_memory(as_alice, "a"), create_memory(as_alice, "b")
    body = {
        "memory_id": [a["id"], b["id"]],
        "agent_id": "agent-7",
        "session_id": "s-1",
        "user_input": "My cat is called Miso",
        "agent_response": "Cute!",
    }
    response = as_alice.post(f"{API}/messages", json=body)
    assert response.json()["message"] == "All add to task."
    written = ok(response)
    assert [w["memory_id"] for w in written] == [a["id"], b["id"]]
    w = written[0]
    assert set(w) >= MESSAGE_FIELDS
    assert (w["message_type"], w["source_id"], w["status"], w["forget_at"]) == (
        "raw",
        None,
        True,
        None,
    )
    assert w["content"] == "User Input: My cat is called Miso\nAgent Response: Cute!"
    assert w["valid_at"] == clock.now().strftime("%Y-%m-%d %H:%M:%S")
    assert (w["agent_id"], w["session_id"], w["user_id"]) == ("agent-7", "s-1", alice.id)
    assert (w["trust"], w["origin"]) == ("unreviewed", "conversation")
    assert entry_rows(engine) == 2


def test_add_stores_the_body_user_id_and_conversation_time(as_alice: TestClient) -> None:
    m = create_memory(as_alice)
    (w,) = add_turn(
        as_alice, [m["id"]], "hi", user_id="end-user-9", conversation_time="2024-05-01T08:30:00Z"
    )
    assert (w["user_id"], w["valid_at"]) == ("end-user-9", "2024-05-01 08:30:00")


def test_add_accepts_a_single_memory_id_string(as_alice: TestClient) -> None:
    m = create_memory(as_alice)
    body = {
        "memory_id": m["id"],
        "agent_id": "a",
        "session_id": "s",
        "user_input": "x",
        "agent_response": "y",
    }
    assert len(ok(as_alice.post(f"{API}/messages", json=body))) == 1


def test_add_names_missing_fields_and_writes_nothing(as_alice: TestClient, engine: Engine) -> None:
    m = create_memory(as_alice)
    response = as_alice.post(f"{API}/messages", json={"memory_id": [m["id"]], "user_input": "x"})
    assert error(response, 400, 101) == (
        "required argument are missing: agent_id,session_id,agent_response; "
    )
    assert entry_rows(engine) == 0


def test_add_refuses_more_than_100_ids(as_alice: TestClient) -> None:
    body = {
        "memory_id": [f"{i:032x}" for i in range(101)],
        "agent_id": "a",
        "session_id": "s",
        "user_input": "x",
        "agent_response": "y",
    }
    assert error(as_alice.post(f"{API}/messages", json=body), 400, 101) == (
        "memory_id must contain at most 100 IDs"
    )


def test_add_to_a_memory_the_caller_cannot_see_is_404_and_writes_nothing(
    as_alice: TestClient, http: Callable[[str | None], TestClient], bob: Account, engine: Engine
) -> None:
    mine = create_memory(as_alice)
    theirs = create_memory(http(bob.key), "bob's")
    body = {
        "memory_id": [mine["id"], theirs["id"]],
        "agent_id": "a",
        "session_id": "s",
        "user_input": "x",
        "agent_response": "y",
    }
    assert theirs["id"] in error(as_alice.post(f"{API}/messages", json=body), 404, 404)
    assert entry_rows(engine) == 0


# --- 1.10 search ---------------------------------------------------------------------------


def test_search_returns_message_dicts_best_first(as_alice: TestClient) -> None:
    m = create_memory(as_alice)
    add_turn(as_alice, [m["id"]], "green tea in the morning")
    add_turn(as_alice, [m["id"]], "the user prefers green tea over coffee, green tea always")
    add_turn(as_alice, [m["id"]], "bicycle repair on sunday")
    found = search(as_alice, "green tea", [m["id"]])
    assert set(found[0]) >= MESSAGE_FIELDS | {"score"}
    assert "bicycle repair on sunday" not in contents(found)
    scores = [f["score"] for f in found]
    assert scores == sorted(scores, reverse=True) and len(found) == 2


def test_search_filters_are_exact_and_exclude_the_rest(as_alice: TestClient) -> None:
    m = create_memory(as_alice)
    add_turn(as_alice, [m["id"]], "tea one", agent_id="a1", session_id="s1", user_id="u1")
    add_turn(as_alice, [m["id"]], "tea two", agent_id="a2", session_id="s1", user_id="u1")
    add_turn(as_alice, [m["id"]], "tea three", agent_id="a1", session_id="s2", user_id="u2")
    add_turn(as_alice, [m["id"]], "tea four", agent_id="a1", session_id="s1x", user_id="u1")
    assert sorted(contents(search(as_alice, "tea", [m["id"]], agent_id="a1"))) == [
        "tea four",
        "tea one",
        "tea three",
    ]
    assert sorted(contents(search(as_alice, "tea", [m["id"]], session_id="s1"))) == [
        "tea one",
        "tea two",
    ]
    assert sorted(contents(search(as_alice, "tea", [m["id"]], user_id="u2"))) == ["tea three"]
    assert contents(
        search(as_alice, "tea", [m["id"]], agent_id="a1", session_id="s1", user_id="u1")
    ) == ["tea one"]


def test_search_takes_ids_repeated_or_comma_separated_and_drops_inaccessible_ones(
    as_alice: TestClient, http: Callable[[str | None], TestClient], bob: Account
) -> None:
    a, b = create_memory(as_alice, "a"), create_memory(as_alice, "b")
    add_turn(as_alice, [a["id"]], "tea in a")
    add_turn(as_alice, [b["id"]], "tea in b")
    theirs = create_memory(http(bob.key), "bob")
    add_turn(http(bob.key), [theirs["id"]], "tea in bob's")
    assert sorted(contents(search(as_alice, "tea", [a["id"], b["id"]]))) == ["tea in a", "tea in b"]
    assert sorted(contents(search(as_alice, "tea", [f"{a['id']},{b['id']}"]))) == [
        "tea in a",
        "tea in b",
    ]
    assert contents(search(as_alice, "tea", [a["id"], theirs["id"]])) == ["tea in a"]
    assert search(as_alice, "tea", [theirs["id"]]) == []


def test_search_hides_disabled_and_forgotten_messages(as_alice: TestClient) -> None:
    m = create_memory(as_alice)
    kept, disabled, forgotten = (
        add_turn(as_alice, [m["id"]], f"tea {n}")[0] for n in ("kept", "off", "gone")
    )
    ok(as_alice.put(f"{API}/messages/{m['id']}:{disabled['message_id']}", json={"status": False}))
    ok(as_alice.delete(f"{API}/messages/{m['id']}:{forgotten['message_id']}"))
    assert [f["message_id"] for f in search(as_alice, "tea", [m["id"]])] == [kept["message_id"]]


def test_search_top_n_limits_and_caps(as_alice: TestClient) -> None:
    m = create_memory(as_alice)
    for i in range(7):
        add_turn(as_alice, [m["id"]], f"tea number {i}")
    assert len(search(as_alice, "tea", [m["id"]])) == 5
    assert len(search(as_alice, "tea", [m["id"]], top_n=2)) == 2
    assert len(search(as_alice, "tea", [m["id"]], top_n=0)) == 7
    assert len(search(as_alice, "tea", [m["id"]], top_n="lots")) == 7
    response = as_alice.get(
        f"{API}/messages/search", params={"query": "tea", "memory_id": m["id"], "top_n": 101}
    )
    assert error(response, 400, 101) == "page_size must be less than or equal to 100"


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"similarity_threshold": "high"}, "similarity_threshold"),
        ({"keywords_similarity_weight": "2"}, "keywords_similarity_weight"),
        ({"query": ""}, "query"),
        ({"message_type": "gossip"}, "message_type"),
        ({"as_of": "yesterday"}, "as_of"),
        ({"fusion": "max"}, "fusion"),
    ],
)
def test_search_validation_names_the_field(
    as_alice: TestClient, params: dict[str, str], field: str
) -> None:
    m = create_memory(as_alice)
    response = as_alice.get(
        f"{API}/messages/search", params={"query": "tea", "memory_id": m["id"], **params}
    )
    message = error(response, 400, 101)
    assert response.json()["data"]["field"] == field
    assert field in message


# --- 1.11 recent ---------------------------------------------------------------------------


def test_recent_is_newest_first_hides_forgotten_and_keeps_disabled(
    as_alice: TestClient, clock: FrozenClock
) -> None:
    m = create_memory(as_alice)
    written = []
    for name in ("old", "off", "gone", "new"):
        clock.advance(minutes=1)
        written.append(add_turn(as_alice, [m["id"]], name)[0])
    ok(as_alice.put(f"{API}/messages/{m['id']}:{written[1]['message_id']}", json={"status": False}))
    ok(as_alice.delete(f"{API}/messages/{m['id']}:{written[2]['message_id']}"))
    found = ok(as_alice.get(f"{API}/messages", params={"memory_id": m["id"]}))
    assert contents(found) == ["new", "off", "old"]
    assert set(found[0]) >= MESSAGE_FIELDS
    assert contents(
        ok(as_alice.get(f"{API}/messages", params={"memory_id": m["id"], "limit": 1}))
    ) == ["new"]


def test_recent_filters_by_agent_and_session(as_alice: TestClient) -> None:
    m = create_memory(as_alice)
    add_turn(as_alice, [m["id"]], "one", agent_id="a1", session_id="s1")
    add_turn(as_alice, [m["id"]], "two", agent_id="a2", session_id="s1")
    add_turn(as_alice, [m["id"]], "three", agent_id="a1", session_id="s2")

    def recent(**params: str) -> list[str]:
        return sorted(
            contents(ok(as_alice.get(f"{API}/messages", params={"memory_id": m["id"], **params})))
        )

    assert recent(agent_id="a1") == ["one", "three"]
    assert recent(session_id="s1") == ["one", "two"]
    assert recent(agent_id="a1", session_id="s1") == ["one"]


def test_recent_requires_memory_ids_and_caps_the_limit(as_alice: TestClient) -> None:
    assert error(as_alice.get(f"{API}/messages"), 400, 101) == "memory_ids is required."
    m = create_memory(as_alice)
    response = as_alice.get(f"{API}/messages", params={"memory_id": m["id"], "limit": 101})
    assert error(response, 400, 101) == "page_size must be less than or equal to 100"
    response = as_alice.get(
        f"{API}/messages", params={"memory_id": ",".join(f"{i:032x}" for i in range(101))}
    )
    assert error(response, 400, 101) == "memory_id must contain at most 100 IDs"


def test_recent_of_inaccessible_memories_is_empty(
    as_alice: TestClient, http: Callable[[str | None], TestClient], bob: Account
) -> None:
    theirs = create_memory(http(bob.key), "bob")
    add_turn(http(bob.key), [theirs["id"]], "secret")
    assert ok(as_alice.get(f"{API}/messages", params={"memory_id": theirs["id"]})) == []


# --- 1.8 forget, 1.9 status, 1.12 content --------------------------------------------------


def test_forget_sets_forget_at_and_cascades_to_extracts(
    as_alice: TestClient, engine: Engine, clock: FrozenClock
) -> None:
    m = create_memory(as_alice, memory_type=["raw", "semantic"])
    (raw,) = add_turn(as_alice, [m["id"]], "I live in Lyon")
    fact = seed_extract(engine, raw, "The user lives in Lyon.")
    response = as_alice.delete(f"{API}/messages/{m['id']}:{raw['message_id']}")
    assert response.json()["message"] is True
    assert sorted(ok(response)["changed"]) == sorted([raw["message_id"], fact])
    content = ok(as_alice.get(f"{API}/messages/{m['id']}:{fact}/content"))
    assert content["forget_at"] == clock.now().strftime("%Y-%m-%d %H:%M:%S")


def test_forgetting_a_missing_message_is_404(as_alice: TestClient) -> None:
    m = create_memory(as_alice)
    response = as_alice.delete(f"{API}/messages/{m['id']}:999")
    assert error(response, 404, 404) == f"Message '999' in memory '{m['id']}' not found."
    response = as_alice.delete(f"{API}/messages/{m['id']}:abc")
    assert response.json()["data"]["field"] == "message_id" and error(response, 400, 101)
    missing = "b" * 32
    assert (
        error(as_alice.delete(f"{API}/messages/{missing}:1"), 404, 404)
        == f"Memory '{missing}' not found."
    )


def test_status_needs_a_boolean(as_alice: TestClient, engine: Engine) -> None:
    m = create_memory(as_alice)
    (w,) = add_turn(as_alice, [m["id"]], "x")
    url = f"{API}/messages/{m['id']}:{w['message_id']}"
    assert error(as_alice.put(url, json={}), 400, 101) == "required argument are missing: status; "
    assert (
        error(as_alice.put(url, json={"status": "false"}), 400, 101) == "Status must be a boolean."
    )
    assert ok(as_alice.put(url, json={"status": False})) == {"changed": [w["message_id"]]}
    assert ok(as_alice.get(f"{url}/content"))["status"] is False
    assert ok(as_alice.put(url, json={"status": True})) == {"changed": [w["message_id"]]}


def test_content_has_every_field_and_the_vector(as_alice: TestClient) -> None:
    m = create_memory(as_alice)
    (w,) = add_turn(as_alice, [m["id"]], "content please")
    data = ok(as_alice.get(f"{API}/messages/{m['id']}:{w['message_id']}/content"))
    assert set(data) >= MESSAGE_FIELDS | {"content_embed", "id", "zone_id"}
    assert data["id"] == f"{m['id']}_{w['message_id']}"
    assert data["zone_id"] == 0
    assert len(data["content_embed"]) == 64 and all(
        isinstance(x, float) for x in data["content_embed"]
    )
    assert data["content"] == "User Input: content please\nAgent Response: ok"
    response = as_alice.get(f"{API}/messages/{m['id']}:12345/content")
    assert error(response, 404, 404) == f"Message '12345' in memory '{m['id']}' not found."

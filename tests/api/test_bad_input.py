"""Input at the edge of what the API accepts answers 400, code 101, naming the field, never
500: pages past the range, times that leave years 1 to 9999 once in UTC, message ids that are
not 64-bit ASCII integers, lone surrogates, bodies that are not JSON or not UTF-8."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.support.api import API, add_turn, create_memory, error

EDGE_TIMES = ["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00"]
BAD_MESSAGE_IDS = ["9223372036854775808", "9" * 5000, "²", "١٢", "-1"]


@pytest.fixture
def seeded(as_alice: TestClient) -> tuple[str, int]:
    memory = create_memory(as_alice)
    (turn,) = add_turn(as_alice, [memory["id"]], "seed")
    return memory["id"], int(turn["message_id"])


def field_of(response: Any) -> str:
    """The field a 400 / code 101 answer names."""
    error(response, 400, 101)
    name: str = response.json()["data"]["field"]
    return name


def raw_json(client: TestClient, method: str, path: str, text: str) -> Any:
    """Send JSON text as written (so escapes such as ``\\ud800`` reach the server)."""
    headers = {"Content-Type": "application/json"}
    return client.request(method, f"{API}{path}", content=text.encode(), headers=headers)


@pytest.mark.parametrize("path", ["/audit", "/memories", "/memories/{memory_id}"])
def test_a_page_past_the_range_names_page(
    as_alice: TestClient, seeded: tuple[str, int], path: str
) -> None:
    url = API + path.format(memory_id=seeded[0])
    assert field_of(as_alice.get(url, params={"page": str(10**18)})) == "page"


@pytest.mark.parametrize("when", EDGE_TIMES)
def test_times_out_of_range_in_utc_name_their_field(
    as_alice: TestClient, seeded: tuple[str, int], when: str
) -> None:
    memory_id, message_id = seeded
    turn = {"memory_id": [memory_id], "agent_id": "a", "session_id": "s", "user_input": "x"}
    turn |= {"agent_response": "y", "conversation_time": when}
    assert field_of(as_alice.post(f"{API}/messages", json=turn)) == "conversation_time"
    correct = {"content": "fixed", "valid_at": when}
    entry = f"{API}/messages/{memory_id}:{message_id}"
    assert field_of(as_alice.post(f"{entry}/correct", json=correct)) == "valid_at"
    for name in ("as_of", "valid_on"):
        query = {"query": "seed", "memory_id": memory_id, name: when}
        assert field_of(as_alice.get(f"{API}/messages/search", params=query)) == name
        assert field_of(as_alice.get(f"{API}/messages/context", params=query)) == name
        assert field_of(as_alice.post(f"{API}/messages/context", json=query)) == name
    for name in ("since", "until"):
        assert field_of(as_alice.get(f"{API}/audit", params={name: when})) == name


@pytest.mark.parametrize("bad", BAD_MESSAGE_IDS, ids=["2**63", "5000 digits", "²", "١٢", "-1"])
def test_message_ids_in_paths_must_be_64_bit_ascii_integers(
    as_alice: TestClient, seeded: tuple[str, int], bad: str
) -> None:
    entry = f"{API}/messages/{seeded[0]}:{bad}"
    for method, suffix, body in [
        ("GET", "/content", None),
        ("GET", "/history", None),
        ("GET", "/evidence", None),
        ("DELETE", "", None),
        ("PUT", "", {"status": True}),
        ("POST", "/correct", {"content": "x"}),
        ("POST", "/review", {"verdict": "confirmed"}),
        ("POST", "/restore", None),
        ("POST", "/erase", None),
    ]:
        response = as_alice.request(method, entry + suffix, json=body)
        assert field_of(response) == "message_id", (method, suffix)
    assert field_of(as_alice.get(f"{API}/audit", params={"message_id": bad})) == "message_id"


def test_arabic_indic_digits_never_resolve_to_a_message(
    as_alice: TestClient, seeded: tuple[str, int]
) -> None:
    memory_id, message_id = seeded
    arabic = "".join(chr(0x660 + int(d)) for d in str(message_id))
    ok_path = f"{API}/messages/{memory_id}:{message_id}/content"
    assert as_alice.get(ok_path).status_code == 200
    response = as_alice.get(f"{API}/messages/{memory_id}:{arabic}/content")
    assert field_of(response) == "message_id"


@pytest.mark.parametrize(
    ("method", "path", "text", "field"),
    [
        (
            "POST",
            "/messages",
            '{"memory_id": ["%(m)s"], "agent_id": "a", "session_id": "s", '
            '"user_input": "\\ud800", "agent_response": "ok"}',
            "user_input",
        ),
        (
            "POST",
            "/memories",
            '{"name": "\\udfff", "memory_type": ["raw"], "embd_id": "m@Builtin", "llm_id": "a@b"}',
            "name",
        ),
        ("PUT", "/memories/%(m)s", '{"name": "x\\ud800"}', "name"),
        ("PUT", "/memories/%(m)s", '{"llm_id": "\\ud800@b"}', "llm_id"),
        ("PUT", "/memories/%(m)s", '{"permissions": "\\ud800"}', "permissions"),
        (
            "POST",
            "/messages/context",
            '{"query": "q", "message_type": ["\\ud800"]}',
            "message_type",
        ),
    ],
    ids=["user_input", "create name", "update name", "llm_id", "permissions", "message_type"],
)
def test_a_lone_surrogate_anywhere_in_a_body_names_its_field(
    as_alice: TestClient, seeded: tuple[str, int], method: str, path: str, text: str, field: str
) -> None:
    memory_id = seeded[0]
    response = raw_json(as_alice, method, path % {"m": memory_id}, text % {"m": memory_id})
    assert field_of(response) == field


def test_an_error_that_echoes_a_lone_surrogate_is_still_sent(as_alice: TestClient) -> None:
    """The engine's message quotes the value; the answer escapes it instead of failing."""
    header = (
        '{"record": "memory", "format": "recallery.memory", "version": 1, "memory": '
        '{"name": "x", "memory_type": ["raw"], "embd_id": "m@Builtin", "llm_id": "a@b", '
        '"permissions": "\\ud800"}}\n'
    )
    headers = {"Content-Type": "application/x-ndjson"}
    response = as_alice.post(f"{API}/memories/import", content=header.encode(), headers=headers)
    assert field_of(response) == "permissions"
    assert response.json()["message"] == "Unknown permission '\ud800'."


@pytest.mark.parametrize(
    "content", [b"{broken", b'{"name": "\xff"}', b'{"name": 1' + b"0" * 5000 + b"}"]
)
def test_a_body_that_is_not_json_names_the_body(as_alice: TestClient, content: bytes) -> None:
    headers = {"Content-Type": "application/json"}
    response = as_alice.post(f"{API}/memories", content=content, headers=headers)
    assert field_of(response) == "body"
    assert response.json()["message"].startswith("body")


def test_a_temperature_sent_as_text_is_refused(
    as_alice: TestClient, seeded: tuple[str, int]
) -> None:
    body = {"name": "t", "memory_type": ["raw"], "embd_id": "m@Builtin", "llm_id": "a@b"}
    response = as_alice.post(f"{API}/memories", json={**body, "temperature": "0.5"})
    assert field_of(response) == "temperature"
    response = as_alice.put(f"{API}/memories/{seeded[0]}", json={"temperature": "0.5"})
    assert field_of(response) == "temperature"


@pytest.mark.parametrize("budget", ["²", "9" * 5000, "١٢", "1.5"])
def test_a_token_budget_must_be_ascii_digits(
    as_alice: TestClient, seeded: tuple[str, int], budget: str
) -> None:
    query = {"query": "seed", "memory_id": seeded[0], "max_tokens": budget}
    assert field_of(as_alice.get(f"{API}/messages/context", params=query)) == "max_tokens"
    assert field_of(as_alice.post(f"{API}/messages/context", json=query)) == "max_tokens"

"""Keys, users, teams and scopes: who gets 401, 403 or 404, and who gets the data."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from fastapi.testclient import TestClient
from tests.support.api import API, Account, add_turn, create_memory, error, ok

from recallery import Engine

UNAUTHORIZED = "<Unauthorized '401: Unauthorized'>"
Http = Callable[[str | None], TestClient]


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer not-a-key"},
        {"Authorization": "Basic abc"},
        {"Authorization": "Bearer "},
    ],
)
def test_a_missing_or_invalid_key_is_401(http: Http, headers: dict[str, str]) -> None:
    client = http(None)
    for method, path in (("GET", "/memories"), ("POST", "/messages"), ("GET", "/audit")):
        response = client.request(method, f"{API}{path}", headers=headers)
        assert response.status_code == 401
        assert (response.json()["code"], response.json()["message"]) == (401, UNAUTHORIZED)


def test_health_needs_no_key(http: Http) -> None:
    assert ok(http(None).get(f"{API}/health"))["status"] == "ok"


def private_paths(
    memory_id: str, message_id: int
) -> list[tuple[str, str, dict[str, object] | None]]:
    entry = f"/messages/{memory_id}:{message_id}"
    return [
        ("GET", f"/memories/{memory_id}/config", None),
        ("GET", f"/memories/{memory_id}", None),
        ("PUT", f"/memories/{memory_id}", {"name": "mine now"}),
        ("DELETE", f"/memories/{memory_id}", None),
        ("GET", f"/memories/{memory_id}/jobs", None),
        ("GET", f"/memories/{memory_id}/export", None),
        ("DELETE", entry, None),
        ("PUT", entry, {"status": False}),
        ("GET", f"{entry}/content", None),
        ("GET", f"{entry}/history", None),
        ("GET", f"{entry}/evidence", None),
        ("POST", f"{entry}/correct", {"content": "stolen"}),
        ("POST", f"{entry}/review", {"verdict": "rejected"}),
        ("POST", f"{entry}/restore", None),
        ("POST", f"{entry}/erase", None),
        ("GET", "/audit", {"memory_id": memory_id}),
    ]


def test_another_users_private_memory_answers_404_everywhere(
    as_alice: TestClient, http: Http, bob: Account, engine: Engine
) -> None:
    m = create_memory(as_alice, "private")
    (w,) = add_turn(as_alice, [m["id"]], "alice's secret")
    as_bob = http(bob.key)
    for method, path, body in private_paths(m["id"], w["message_id"]):
        if method == "GET" and body is not None:
            response = as_bob.get(f"{API}{path}", params=body)
        else:
            response = as_bob.request(method, f"{API}{path}", json=body)
        assert error(response, 404, 404) == f"Memory '{m['id']}' not found.", (method, path)
    assert ok(as_bob.get(f"{API}/memories"))["total_count"] == 0
    found = ok(
        as_bob.get(f"{API}/messages/search", params={"query": "secret", "memory_id": m["id"]})
    )
    assert found == []
    assert ok(as_alice.get(f"{API}/memories/{m['id']}/config"))["name"] == "private"
    with engine.store.read() as r:
        assert r.conn.execute("SELECT content FROM entries")[0][0].startswith("User Input: alice's")


@pytest.fixture
def team(as_alice: TestClient, alice: Account, bob: Account) -> dict[str, str]:
    """Alice's memories: one shared with her team, one private; Bob joins her team."""
    shared = create_memory(as_alice, "shared", permissions="team")
    private = create_memory(as_alice, "private")
    add_turn(as_alice, [shared["id"]], "team tea recipe")
    add_turn(as_alice, [private["id"]], "private tea recipe")
    ok(as_alice.post(f"{API}/teams/{alice.id}/members", json={"user_id": bob.id}))
    return {"shared": shared["id"], "private": private["id"]}


def test_team_members_use_team_memories_but_not_private_ones(
    team: dict[str, str], http: Http, bob: Account, alice: Account
) -> None:
    as_bob = http(bob.key)
    listed = ok(as_bob.get(f"{API}/memories"))["memory_list"]
    assert [(m["name"], m["owner_name"]) for m in listed] == [("shared", "alice")]
    assert ok(as_bob.get(f"{API}/memories/{team['shared']}/config"))["owner_name"] == "alice"
    add_turn(as_bob, [team["shared"]], "bob adds tea notes")
    found = ok(
        as_bob.get(
            f"{API}/messages/search",
            params={"query": "tea", "memory_id": [team["shared"], team["private"]]},
        )
    )
    assert {f["memory_id"] for f in found} == {team["shared"]}
    assert len(found) == 2
    assert ok(as_bob.put(f"{API}/memories/{team['shared']}", json={"description": "by bob"}))
    assert error(as_bob.get(f"{API}/memories/{team['private']}/config"), 404, 404)
    assert ok(as_bob.get(f"{API}/teams/{alice.id}/members"))["members"] == [bob.id]


def test_owner_only_actions_are_403_for_team_members(
    team: dict[str, str], http: Http, bob: Account
) -> None:
    as_bob = http(bob.key)
    shared = team["shared"]
    message = error(as_bob.delete(f"{API}/memories/{shared}"), 403, 403)
    assert message == "only the owner may delete"
    raw = ok(as_bob.get(f"{API}/messages", params={"memory_id": shared}))[0]
    assert error(as_bob.post(f"{API}/messages/{shared}:{raw['message_id']}/erase"), 403, 403)
    response = as_bob.put(f"{API}/memories/{shared}", json={"permissions": "me"})
    assert error(response, 403, 403) == "only the owner may change permissions"


def test_outsiders_of_the_team_get_404(
    team: dict[str, str], http: Http, account: Callable[..., Account]
) -> None:
    carol = http(account("carol").key)
    assert error(carol.get(f"{API}/memories/{team['shared']}/config"), 404, 404)
    assert ok(carol.get(f"{API}/memories"))["total_count"] == 0


def test_only_the_owner_or_an_admin_adds_team_members(
    as_alice: TestClient,
    http: Http,
    alice: Account,
    bob: Account,
    admin: Account,
    account: Callable[..., Account],
) -> None:
    carol = account("carol")
    response = http(bob.key).post(f"{API}/teams/{alice.id}/members", json={"user_id": carol.id})
    assert error(response, 403, 403)
    ok(http(admin.key).post(f"{API}/teams/{alice.id}/members", json={"user_id": carol.id}))
    assert ok(as_alice.get(f"{API}/teams/{alice.id}/members"))["members"] == [carol.id]
    assert error(http(bob.key).get(f"{API}/teams/{alice.id}/members"), 404, 404)
    ok(as_alice.delete(f"{API}/teams/{alice.id}/members/{carol.id}"))
    assert ok(as_alice.get(f"{API}/teams/{alice.id}/members"))["members"] == []


def test_a_scoped_key_reaches_only_its_memories(
    as_alice: TestClient, http: Http, alice: Account, engine: Engine
) -> None:
    a, b = create_memory(as_alice, "a"), create_memory(as_alice, "b")
    add_turn(as_alice, [a["id"], b["id"]], "tea everywhere")
    scoped = ok(
        as_alice.post(f"{API}/users/{alice.id}/keys", json={"name": "agent", "scope": [a["id"]]})
    )
    assert scoped["scope"] == [a["id"]]
    agent = http(scoped["key"])
    assert [m["name"] for m in ok(agent.get(f"{API}/memories"))["memory_list"]] == ["a"]
    assert error(agent.get(f"{API}/memories/{b['id']}/config"), 404, 404)
    found = ok(
        agent.get(
            f"{API}/messages/search", params={"query": "tea", "memory_id": [a["id"], b["id"]]}
        )
    )
    assert {f["memory_id"] for f in found} == {a["id"]}
    body = {
        "memory_id": [b["id"]],
        "agent_id": "x",
        "session_id": "s",
        "user_input": "u",
        "agent_response": "r",
    }
    assert error(agent.post(f"{API}/messages", json=body), 404, 404)
    assert ok(agent.get(f"{API}/users/me"))["scope"] == [a["id"]]
    # a scoped key cannot mint itself an unscoped one, nor manage the team
    assert error(agent.post(f"{API}/users/{alice.id}/keys", json={}), 403, 403)
    assert error(
        agent.post(f"{API}/teams/{alice.id}/members", json={"user_id": alice.id}), 403, 403
    )


def test_users_are_created_and_listed_by_admins_only(
    http: Http, admin: Account, alice: Account
) -> None:
    as_admin, as_alice = http(admin.key), http(alice.key)
    assert error(as_alice.post(f"{API}/users", json={"name": "eve"}), 403, 403)
    assert error(as_alice.get(f"{API}/users"), 403, 403)
    created = ok(as_admin.post(f"{API}/users", json={"name": "eve"}))
    assert (created["name"], created["is_admin"]) == ("eve", False)
    assert sorted(u["name"] for u in ok(as_admin.get(f"{API}/users"))) == ["admin", "alice", "eve"]
    assert (
        error(as_admin.post(f"{API}/users", json={"name": "eve"}), 409, 409)
        == "User 'eve' already exists."
    )
    assert (
        error(as_admin.post(f"{API}/users", json={}), 400, 101)
        == "required argument are missing: name; "
    )
    assert error(as_admin.post(f"{API}/users", json={"name": "x", "is_admin": "yes"}), 400, 101)


def test_users_manage_their_own_keys_and_revoked_keys_stop_working(
    http: Http, alice: Account, bob: Account, admin: Account, engine: Engine
) -> None:
    as_alice = http(alice.key)
    new = ok(as_alice.post(f"{API}/users/{alice.id}/keys", json={"name": "laptop"}))
    assert new["key"].startswith("rc-") and new["user_id"] == alice.id
    listed = ok(as_alice.get(f"{API}/users/{alice.id}/keys"))
    assert {k["name"] for k in listed} == {"", "laptop"}
    assert all("key" not in k for k in listed)
    with engine.store.read() as r:
        stored = r.conn.execute("SELECT key_hash FROM api_keys")
    assert new["key"] not in {row[0] for row in stored}
    laptop = http(new["key"])
    assert ok(laptop.get(f"{API}/users/me"))["name"] == "alice"
    assert error(as_alice.get(f"{API}/users/{bob.id}/keys"), 403, 403)
    assert error(as_alice.post(f"{API}/users/{bob.id}/keys", json={}), 403, 403)
    assert ok(http(admin.key).get(f"{API}/users/{bob.id}/keys"))
    ok(as_alice.delete(f"{API}/users/{alice.id}/keys/{new['id']}"))
    assert laptop.get(f"{API}/users/me").status_code == 401
    assert error(as_alice.delete(f"{API}/users/{alice.id}/keys/nope"), 404, 404)
    assert ok(as_alice.get(f"{API}/users/{alice.id}/keys"))[-1]["revoked_at"] is not None

"""The stdio MCP server's engine backend (``recallery mcp --data-dir``) checks its caller at
every tool call, as ``/mcp`` does per request: a revoked key stops working, a user removed
from a team loses the team's memories, and a key's scope and capabilities stay."""

from __future__ import annotations

import pytest

from recallery import Engine, Forbidden, Principal, SearchRequest, Unauthorized
from recallery.mcp.backend import EngineBackend, memories


def _team_memory(engine: Engine, alice: Principal) -> str:
    m = engine.create_memory(
        alice,
        name="team notes",
        memory_type=["raw"],
        embd_id="x@Builtin",
        llm_id="y@Z",
        permissions="team",
    )
    engine.add_turn(alice, [m.id], user_input="the vault code is 4471", agent_response="ok")
    return m.id


def test_a_revoked_key_stops_working_at_the_next_call(engine: Engine, alice: Principal) -> None:
    memory_id = _team_memory(engine, alice)
    key_id, key = engine.create_api_key(alice, alice.user_id)
    backend = EngineBackend(engine, engine.authenticate(key), key=key)
    assert [m.id for m in memories(backend)] == [memory_id]
    engine.revoke_api_key(alice, alice.user_id, key_id)
    with pytest.raises(Unauthorized):
        memories(backend)
    with pytest.raises(Unauthorized):
        backend.erase(memory_id, 1, reason="revoked keys erase nothing")


def test_a_user_removed_from_a_team_loses_its_memory(
    engine: Engine, alice: Principal, bob: Principal
) -> None:
    memory_id = _team_memory(engine, alice)
    engine.join_team(alice, alice.user_id, bob.user_id)
    _, key = engine.create_api_key(bob, bob.user_id)
    with_key = EngineBackend(engine, engine.authenticate(key), key=key)
    as_user = EngineBackend(engine, engine.principal(bob.user_id))  # --user, without a key
    request = SearchRequest("vault code", (memory_id,), similarity_threshold=0.0)
    for backend in (with_key, as_user):
        assert len(backend.search(request)) == 1
    engine.leave_team(alice, alice.user_id, bob.user_id)
    for backend in (with_key, as_user):
        assert memories(backend) == []
        assert backend.search(request) == []


def test_a_keys_capabilities_stay_with_the_backend(engine: Engine, alice: Principal) -> None:
    memory_id = _team_memory(engine, alice)
    _, key = engine.create_api_key(alice, alice.user_id, capabilities=["read"])
    backend = EngineBackend(engine, engine.authenticate(key))  # as /mcp builds it per request
    with pytest.raises(Forbidden, match="'manage' capability"):
        backend.erase(memory_id, 1, reason="a reader erases nothing")

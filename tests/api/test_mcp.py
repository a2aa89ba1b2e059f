"""The MCP server through the SDK's own client, over streamable HTTP (``/mcp`` in the app)
and in process over the ``--url`` backend (the recallery SDK): every tool checked against the
engine, and the credential deciding what exists and which tools are listed."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass

import httpx2
import pytest
from fastapi import FastAPI
from tests.support.api import EMBD, Account
from tests.support.mcp_sessions import (
    BASE,
    Opener,
    engine_ids,
    ids,
    run,
)

from recallery import Engine, Memory, NotFound, SearchRequest
from recallery.mcp.server import allowed_tools, build_server
from recallery.models import Capability
from recallery.testing import FrozenClock

READ_TOOLS = {"list_memories", "recall", "get_context", "get_entry", "task_status"}
LLM = "glm-4-flash@ZHIPU-AI"


@dataclass
class World:
    engine: Engine
    alice: Account
    notes: Memory
    diary: Memory
    bob_entry: int
    bob_memory: Memory
    diary_entry: int


@pytest.fixture
def world(engine: Engine, account: Callable[..., Account]) -> World:
    """Alice's notes and diary both hold text about Berlin; so does Bob's memory."""
    alice, bob = account("alice"), account("bob")

    def memory(owner: Account, name: str, text: str) -> tuple[Memory, int]:
        m = engine.create_memory(
            owner.principal, name=name, memory_type=["raw", "semantic"], embd_id=EMBD, llm_id=LLM
        )
        (raw,) = engine.add_turn(owner.principal, [m.id], user_input=text, agent_response="ok")
        return m, raw.message_id

    notes, _ = memory(alice, "notes", "I moved to Berlin last spring.")
    diary, diary_entry = memory(alice, "diary", "Berlin diary: the door code is 4711.")
    bobs, bob_entry = memory(bob, "bobs", "Bob lives in Berlin too.")
    return World(engine, alice, notes, diary, bob_entry, bobs, diary_entry)


def key_for(world: World, **options: object) -> str:
    a = world.alice
    _, key = world.engine.create_api_key(a.principal, a.id, **options)  # type: ignore[arg-type]
    return key


def test_every_tool_agrees_with_the_engine(world: World, opener: Opener) -> None:
    e, me = world.engine, world.alice.principal

    async def check() -> None:
        async with opener(world.alice.key) as s:
            assert await s.tools() == allowed_tools(frozenset(Capability))
            listed = await s.ok("list_memories")
            assert {m["name"] for m in listed["memories"]} == {"notes", "diary"}

            found = await s.ok("recall", query="Berlin", memory="notes", threshold=0.0)
            want = e.search(me, SearchRequest("Berlin", (world.notes.id,), similarity_threshold=0))
            assert ids(found) == engine_ids(e, want) and found["results"][0]["score"] > 0
            block = await s.ok("get_context", query="Berlin", memory="notes", threshold=0.0)
            assert block["message_ids"] == ids(found) and "Berlin" in block["text"]

            wrote = await s.ok("remember", memory="notes", user_input="I like tea.",
                               agent_response="Noted.", session_id="s-1")  # fmt: skip
            turn = wrote["message_id"]
            assert e.get_entry(me, world.notes.id, turn)[0].session_id == "s-1"
            task = await s.ok("task_status", memory="notes", entry_id=turn)
            assert task["found"] and task["state"] == "queued"

            stated = await s.ok("add_entries", memory="notes",
                                entries=[{"content": "The user likes green tea"}])  # fmt: skip
            fact = stated["outcomes"][0]["message_id"]
            assert stated["outcomes"][0]["action"] == "add"
            assert e.get_entry(me, world.notes.id, fact)[0].origin.value == "manual"

            fixed = await s.ok("correct", memory="notes", entry_id=fact,
                               content="The user likes black tea")  # fmt: skip
            detail = await s.ok("get_entry", memory="notes", entry_id=fixed["id"])
            assert [v["content"] for v in detail["history"]] == [
                "The user likes green tea",
                "The user likes black tea",
            ]
            assert [h.message_id for h in e.history(me, world.notes.id, fact)] == [
                fact, fixed["id"]
            ]  # fmt: skip

            assert (await s.ok("forget", memory="notes", entry_id=turn))["changed"] == [turn]
            assert e.get_entry(me, world.notes.id, turn)[0].forget_at is not None
            assert (await s.ok("restore", memory="notes", entry_id=turn))["changed"] == [turn]
            assert e.get_entry(me, world.notes.id, turn)[0].forget_at is None

            receipt = await s.ok("erase", memory="notes", entry_id=turn, reason="asked")
            assert receipt["erased"] == [turn] and receipt["reason"] == "asked"
            with pytest.raises(NotFound):
                e.get_entry(me, world.notes.id, turn)

    run(check)


def test_a_key_scoped_to_one_memory_gets_nothing_of_another(world: World, opener: Opener) -> None:
    key = key_for(world, scope=[world.notes.id])

    async def check() -> None:
        async with opener(key) as s:
            listed = await s.ok("list_memories")
            assert [m["id"] for m in listed["memories"]] == [world.notes.id]
            everything = await s.ok("recall", query="Berlin diary door code", threshold=0.0)
            assert {r["memory_id"] for r in everything["results"]} == {world.notes.id}
            # the diary's words, not its number alone: a fence's random tag may hold "4711"
            context = (await s.ok("get_context", query="door code 4711"))["text"]
            assert "door code" not in context and "Berlin diary" not in context
            for memory in (world.diary.id, "diary"):
                named = await s.call("recall", query="Berlin", memory=memory)
                assert named.error and "not found" in named.text
            for tool in ("get_entry", "correct", "erase", "forget", "task_status"):
                args = {"entry_id": world.diary_entry, "content": "x"} if tool == "correct" else {
                    "entry_id": world.diary_entry}  # fmt: skip
                for memory in (world.diary.id, world.notes.id):
                    refused = await s.call(tool, memory=memory, **args)
                    assert refused.error and "not found" in refused.text, (tool, refused.text)
            wrote = await s.call("remember", memory=world.diary.id, user_input="x",
                                 agent_response="y")  # fmt: skip
            assert wrote.error

    run(check)
    e, me = world.engine, world.alice.principal
    diary, _ = e.get_entry(me, world.diary.id, world.diary_entry)
    assert diary.content.startswith("User Input: Berlin diary") and diary.forget_at is None
    assert e.list_messages(me, world.diary.id).total == 1


def test_a_read_only_key_cannot_write_and_does_not_see_the_tools(
    world: World, opener: Opener
) -> None:
    key = key_for(world, capabilities=["read"])
    entry = world.diary_entry

    async def check() -> None:
        async with opener(key) as s:
            assert await s.tools() == READ_TOOLS
            assert ids(await s.ok("recall", query="door code", memory="diary")) == [entry]
            attempts = {
                "remember": {"memory": "diary", "user_input": "x", "agent_response": "y"},
                "add_entries": {"memory": "diary", "entries": [{"content": "A fact"}]},
                "forget": {"memory": "diary", "entry_id": entry},
                "correct": {"memory": "diary", "entry_id": entry, "content": "changed"},
                "erase": {"memory": "diary", "entry_id": entry},
            }
            for tool, args in attempts.items():
                refused = await s.call(tool, **args)
                assert refused.error and "Forbidden" in refused.text, tool

    run(check)
    e, me = world.engine, world.alice.principal
    diary, _ = e.get_entry(me, world.diary.id, entry)
    assert "4711" in diary.content and diary.forget_at is None and diary.retired_at is None
    assert e.list_messages(me, world.diary.id).total == 1


def test_another_users_entries_are_refused(world: World, opener: Opener) -> None:
    async def check() -> None:
        async with opener(world.alice.key) as s:
            for tool, extra in (("get_entry", {}), ("correct", {"content": "x"}), ("erase", {})):
                for memory in (world.bob_memory.id, "notes"):
                    refused = await s.call(tool, memory=memory, entry_id=world.bob_entry, **extra)
                    assert refused.error and "not found" in refused.text, (tool, memory)

    run(check)
    bob = world.engine.principal(world.bob_memory.tenant_id)
    kept, _ = world.engine.get_entry(bob, world.bob_memory.id, world.bob_entry)
    assert kept.content.startswith("User Input: Bob lives in Berlin")
    assert len(world.engine.history(bob, world.bob_memory.id, world.bob_entry)) == 1


def test_mcp_over_http_needs_a_key_and_a_local_origin(world: World, mcp_app: FastAPI) -> None:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    accept = {"Accept": "application/json, text/event-stream"}

    async def check() -> None:
        async with (
            mcp_app.router.lifespan_context(mcp_app),
            httpx2.AsyncClient(transport=httpx2.ASGITransport(app=mcp_app)) as http,
        ):
            for headers in ({}, {"Authorization": "Bearer rc-not-a-key"}, {"Authorization": "x"}):
                r = await http.post(f"{BASE}/mcp", json=call, headers={**accept, **headers})
                assert r.status_code == 401 and "www-authenticate" not in r.headers  # no OAuth
                assert r.json()["code"] == 401
                assert "Authorization: Bearer rc-" in r.json()["message"]
            evil = {**accept, "Authorization": f"Bearer {world.alice.key}",
                    "Origin": "http://attacker.example"}  # fmt: skip
            r = await http.post(f"{BASE}/mcp", json=call, headers=evil)
            assert r.status_code == 403
            r = await http.post("http://attacker.example/mcp", json=call, headers={
                **accept, "Authorization": f"Bearer {world.alice.key}"})  # fmt: skip
            assert r.status_code in (403, 421)

    run(check)


def test_a_get_stream_is_refused_at_once(world: World, mcp_app: FastAPI) -> None:
    """The stateless server has nothing of its own to stream: GET /mcp answers 405 instead of
    holding an idle event stream open for as long as the client waits."""
    headers = {"Accept": "text/event-stream", "Authorization": f"Bearer {world.alice.key}"}

    async def check() -> None:
        async with (
            mcp_app.router.lifespan_context(mcp_app),
            httpx2.AsyncClient(transport=httpx2.ASGITransport(app=mcp_app), timeout=5) as http,
        ):
            r = await http.get(f"{BASE}/mcp", headers=headers)
            assert r.status_code == 405

    run(check)


def test_server_resource_and_prompt_follow_the_key(world: World, opener: Opener) -> None:
    key = key_for(world, scope=[world.notes.id])

    async def check() -> None:
        async with opener(key) as s:
            listed = await s.client.read_resource("recallery://memories")
            assert world.notes.id in listed.contents[0].text  # type: ignore[union-attr]
            assert world.diary.id not in listed.contents[0].text  # type: ignore[union-attr]
            prompt = await s.client.get_prompt("recall_context", {"query": "Berlin"})
            text = prompt.messages[0].content.text  # type: ignore[union-attr]
            assert "moved to Berlin" in text
            assert "door code" not in text and "Berlin diary" not in text  # (see above)

    run(check)


def test_recall_results_leave_out_what_an_entry_lacks(world: World, opener: Opener) -> None:
    """Each result names the session it has and leaves out the user, agent and end of validity
    it lacks, and the state every current result shares (the schema gives their defaults);
    the results' schema is written out in place."""
    e, me = world.engine, world.alice.principal
    e.add_turn(
        me, [world.notes.id], user_input="Berlin again.", agent_response="ok", session_id="s-9"
    )

    async def check() -> None:
        async with opener(world.alice.key) as s:
            found = await s.ok("recall", query="Berlin", memory="notes", threshold=0.0)
            assert {r.get("session_id", "") for r in found["results"]} == {"s-9", ""}
            for r in found["results"]:
                absent = {"user_id", "agent_id", "invalid_at", "trust", "current", "forgotten"}
                absent.add("source_id")  # a raw turn is its own source
                assert not absent & r.keys()
                assert {"id", "memory_id", "type", "content", "score", "valid_at"} <= r.keys()
            listed = (await s.client.list_tools()).tools
            schema = next(t.output_schema for t in listed if t.name == "recall")
            assert schema is not None and "$ref" not in json.dumps(schema)
            item = schema["properties"]["results"]["items"]
            optional = absent | {"session_id"}
            assert optional <= item["properties"].keys()
            assert not optional & set(item["required"])

    run(check)


def test_recall_as_of_marks_a_version_retired_since(
    world: World, opener: Opener, clock: FrozenClock
) -> None:
    """An ``as_of`` recall finds the version memory held then, marked no longer current;
    a plain recall finds only the correction, with no state fields."""
    e, me = world.engine, world.alice.principal
    (turn,) = e.add_turn(
        me, [world.notes.id], user_input="My dentist is Dr Weiss.", agent_response="ok"
    )
    before = clock.now()
    clock.advance(hours=1)
    fixed = e.correct(me, world.notes.id, turn.message_id, "My dentist is Dr Weissmann.")

    async def check() -> None:
        async with opener(world.alice.key) as s:
            args = {"query": "dentist", "memory": "notes", "threshold": 0.0}
            then = await s.ok("recall", **args, as_of=before.isoformat())
            old = next(r for r in then["results"] if r["id"] == turn.message_id)
            assert old["current"] is False and "forgotten" not in old
            assert fixed.message_id not in ids(then)
            now = await s.ok("recall", **args)
            assert turn.message_id not in ids(now) and fixed.message_id in ids(now)
            assert all("current" not in r for r in now["results"])

    run(check)


def test_building_the_server_leaves_the_hosts_logging_alone() -> None:
    root = logging.getLogger()
    before = (list(root.handlers), root.level)
    build_server(lambda _request: pytest.fail("no caller is resolved while building"))
    assert (list(root.handlers), root.level) == before

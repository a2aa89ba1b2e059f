"""``recallery mcp`` over stdio, as a desktop client runs it: a subprocess on a data directory,
acting with the key in ``RECALLERY_API_KEY`` (the real local embedding model)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client as MCPClient
from mcp import StdioServerParameters
from tests.support.mcp_sessions import Session, ids

from recallery import Engine

pytestmark = pytest.mark.model
EMBD = "BAAI/bge-small-en-v1.5@Builtin"


def _seed(data: Path) -> tuple[str, str, dict[str, int]]:
    """Alice's notes and diary, both about Berlin; a key scoped to the notes, and a read-only
    one. Returns the keys and the turn id of each memory."""
    with Engine.open(data) as engine:
        alice = engine.principal(engine.create_user("alice").id)
        turns = {}
        for name, text in (("notes", "I moved to Berlin last spring."),
                           ("diary", "Berlin diary: the door code is 4711.")):  # fmt: skip
            m = engine.create_memory(
                alice, name=name, memory_type=["raw"], embd_id=EMBD, llm_id="x@Y"
            )
            (raw,) = engine.add_turn(alice, [m.id], user_input=text, agent_response="ok")
            turns[name] = raw.message_id
            if name == "notes":
                notes_id = m.id
        _, scoped = engine.create_api_key(alice, alice.user_id, scope=[notes_id])
        _, reader = engine.create_api_key(alice, alice.user_id, capabilities=["read"])
    return scoped, reader, turns


def _server(data: Path, key: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "recallery", "mcp", "--data-dir", str(data)],
        env={**os.environ, "RECALLERY_API_KEY": key},
    )


def test_stdio_server_acts_with_the_key_in_the_environment(tmp_path: Path) -> None:
    scoped, reader, turns = _seed(tmp_path)

    async def check() -> None:
        async with MCPClient(_server(tmp_path, scoped)) as client:
            s = Session(client)
            found = await s.ok("recall", query="Berlin door code", threshold=0.0)
            assert ids(found) == [turns["notes"]]
            named = await s.call("recall", query="door code", memory="diary")
            assert named.error and "not found" in named.text
            wrote = await s.ok("remember", user_input="I like tea.", agent_response="ok")
            assert wrote["message_id"] > turns["diary"]
        async with MCPClient(_server(tmp_path, reader)) as client:
            s = Session(client)
            assert "remember" not in await s.tools() and "recall" in await s.tools()
            refused = await s.call("erase", memory="diary", entry_id=turns["diary"])
            assert refused.error and "Forbidden" in refused.text
            found = await s.ok("recall", query="door code", memory="diary")
            assert ids(found) == [turns["diary"]]

    anyio.run(check)

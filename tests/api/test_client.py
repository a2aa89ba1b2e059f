"""The Python SDK: typed results equal to what the engine returns, the engine's exceptions, and
one implementation behind the sync and async clients."""

from __future__ import annotations

import re
from collections.abc import Callable

import httpx
import numpy as np
import pytest
from fastapi import FastAPI
from tests.support.api import EMBD, LLM, Account, seed_extract

import recallery
from recallery import (
    AsyncClient,
    Client,
    Conflict,
    Engine,
    Forbidden,
    InvalidInput,
    NotFound,
    Unauthorized,
)
from recallery import client as client_module
from recallery.models import EntryType, Permission, Trust
from recallery.testing import FrozenClock
from recallery.wire import entry_dict

Sdk = Callable[[str | None], Client]


def test_memories_and_turns_round_trip_to_the_engines_own_objects(
    sdk: Sdk, alice: Account, engine: Engine
) -> None:
    ms = sdk(alice.key)
    memory = ms.create_memory("notes", ["raw", "semantic"], EMBD, LLM, description="d")
    assert memory == engine.get_memory(alice.principal, memory.id)
    assert memory.memory_types == (EntryType.RAW, EntryType.SEMANTIC)
    (entry,) = ms.add_turn(
        [memory.id], user_input="I live in Lyon", agent_response="ok", user_id="u1"
    )
    assert entry == engine.get_entry(alice.principal, memory.id, entry.message_id)[0]
    seed_extract(engine, entry_dict(entry), "The user lives in Lyon.")
    assert ms.list_messages(memory.id) == engine.list_messages(alice.principal, memory.id)
    page = ms.list_memories(keywords="not")
    assert page.total == 1 and page.items[0].owner_name == "alice"
    assert page.items[0].permissions is Permission.ME
    updated = ms.update_memory(memory.id, {"permissions": "team"})
    assert updated == engine.get_memory(alice.principal, memory.id)
    ms.delete_memory(memory.id)
    with pytest.raises(NotFound, match=re.escape(f"Memory '{memory.id}' not found.")):
        ms.get_memory(memory.id)


def test_search_recent_and_entry_reads(sdk: Sdk, alice: Account, engine: Engine) -> None:
    ms = sdk(alice.key)
    memory = ms.create_memory("notes", ["raw"], EMBD, LLM)
    ms.add_turn([memory.id], user_input="green tea", agent_response="ok", agent_id="a1")
    (coffee,) = ms.add_turn(
        [memory.id], user_input="black coffee", agent_response="ok", agent_id="a2"
    )
    hits = ms.search("tea", [memory.id], top_n=3)
    assert [h.entry.content for h in hits] == ["User Input: green tea\nAgent Response: ok"]
    assert hits[0].score > 0
    assert [e.agent_id for e in ms.recent([memory.id], agent_id="a2")] == ["a2"]
    entry, vector = ms.get_entry(memory.id, coffee.message_id)
    stored, stored_vector = engine.get_entry(alice.principal, memory.id, coffee.message_id)
    assert entry == stored
    assert vector is not None and stored_vector is not None
    np.testing.assert_array_equal(vector, stored_vector)
    context = ms.context("coffee", [memory.id], max_tokens=500)
    assert context.message_ids == (coffee.message_id,)


def test_lifecycle_operations(sdk: Sdk, alice: Account, engine: Engine, clock: FrozenClock) -> None:
    ms = sdk(alice.key)
    memory = ms.create_memory("notes", ["raw"], EMBD, LLM)
    (entry,) = ms.add_turn([memory.id], user_input="office in Paris", agent_response="ok")
    assert ms.set_status(memory.id, entry.message_id, False) == [entry.message_id]
    assert ms.set_status(memory.id, entry.message_id, True) == [entry.message_id]
    assert ms.forget(memory.id, entry.message_id) == [entry.message_id]
    assert ms.restore(memory.id, entry.message_id) == [entry.message_id]
    assert ms.review(memory.id, entry.message_id, "confirmed").trust is Trust.CONFIRMED
    clock.advance(minutes=1)
    new = ms.correct(memory.id, entry.message_id, "office in Lyon", reason="moved")
    assert [v.message_id for v in ms.history(memory.id, new.message_id)] == [
        entry.message_id,
        new.message_id,
    ]
    assert ms.evidence(memory.id, new.message_id) == []
    events = ms.audit_log(memory_id=memory.id)
    assert events == engine.audit_log(alice.principal, memory_id=memory.id, limit=30)
    receipt = ms.erase(memory.id, new.message_id, reason="gdpr")
    assert receipt.erased == (entry.message_id, new.message_id) and receipt.reason == "gdpr"
    assert ms.jobs(memory.id).total == 0


def test_export_and_import(sdk: Sdk, alice: Account) -> None:
    ms = sdk(alice.key)
    memory = ms.create_memory("journal", ["raw"], EMBD, LLM)
    ms.add_turn(
        [memory.id],
        user_input="hello",
        agent_response="ok",
        conversation_time="2022-02-02T02:02:02Z",
    )
    records = ms.export_memory(memory.id)
    assert records[0]["record"] == "memory" and records[1]["valid_at"] == "2022-02-02 02:02:02"
    report = ms.import_memory(None, records)
    assert (report.imported, report.skipped_extracted) == (1, 0)
    (copy,) = ms.recent([report.memory_id])
    assert copy.valid_at.isoformat() == "2022-02-02T02:02:02+00:00"
    assert ms.import_memory(memory.id, [{"content": "more"}]).imported == 1


def test_accounts(sdk: Sdk, admin: Account, engine: Engine) -> None:
    root = sdk(admin.key)
    assert root.me() == engine.authenticate(admin.key)
    assert root.health()["status"] == "ok"
    dan = root.create_user("dan")
    assert dan in root.list_users()
    record, key = root.create_api_key(dan.id, name="cli", scope=None)
    as_dan = sdk(key)
    assert as_dan.me().user_id == dan.id
    assert [k.id for k in as_dan.list_api_keys(dan.id)] == [record.id]
    erin = root.create_user("erin")
    as_dan.join_team(dan.id, erin.id)
    assert as_dan.team_members(dan.id) == [erin.id]
    as_dan.leave_team(dan.id, erin.id)
    as_dan.revoke_api_key(dan.id, record.id)
    with pytest.raises(Unauthorized):
        as_dan.me()


def test_errors_raise_the_engines_exceptions(sdk: Sdk, alice: Account, admin: Account) -> None:
    ms = sdk(alice.key)
    with pytest.raises(InvalidInput) as invalid:
        ms.create_memory(" ", ["raw"], EMBD, LLM)
    assert (invalid.value.field, invalid.value.message) == (
        "name",
        "Memory name cannot be empty or whitespace.",
    )
    with pytest.raises(NotFound, match="not found"):
        ms.get_memory("0" * 32)
    with pytest.raises(Forbidden):
        ms.create_user("mallory")
    sdk(admin.key).create_user("mallory")
    with pytest.raises(Conflict, match="already exists"):
        sdk(admin.key).create_user("mallory")
    with pytest.raises(Unauthorized):
        sdk("wrong").list_memories()
    with pytest.raises(Unauthorized):
        sdk(None).list_memories()


def test_both_clients_offer_every_operation_from_one_definition() -> None:
    def public(cls: type) -> set[str]:
        return {n for n in vars(cls) if not n.startswith("_") and callable(getattr(cls, n))}

    assert public(Client) == set(client_module.OPERATIONS) | {"close"}
    assert public(AsyncClient) == set(client_module.OPERATIONS) | {"aclose"}
    for name in client_module.OPERATIONS:
        sync, async_ = getattr(Client, name), getattr(AsyncClient, name)
        assert sync.__wrapped__ is async_.__wrapped__ is getattr(client_module, name)
    assert recallery.Client is Client and recallery.AsyncClient is AsyncClient


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_async_client(app: FastAPI, alice: Account) -> None:
    transport = httpx.ASGITransport(app=app)
    async with AsyncClient("http://testserver", alice.key, transport=transport) as ms:
        memory = await ms.create_memory("async", ["raw"], EMBD, LLM)
        await ms.add_turn([memory.id], user_input="async tea", agent_response="ok")
        hits = await ms.search("tea", [memory.id])
        assert [h.entry.memory_id for h in hits] == [memory.id]
        with pytest.raises(NotFound):
            await ms.get_memory("1" * 32)

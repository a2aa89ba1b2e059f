"""The ``origin`` filter, added end to end from its declarations (a field of ``SearchRequest``
and of ``MessageFilter``, the store's filter, one line of docs): through REST search, context
and the Messages list, and the SDK's ``search``, ``context`` and ``list_messages``. A memory
holds a turn written live, a turn imported and an entry an agent stated, so a filter dropped
on the way (or ignored by one backend's search) fails."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.support.api import API, Account, error, ok

from recallery import Client, EntryType

Sdk = Callable[[str | None], Client]
EMBD, LLM = "BAAI/bge-small-en-v1.5@Builtin", "fake-chat@Fake"


class Seeded:
    """One memory: a live turn, an imported turn and a stated (manual) entry about tea."""

    def __init__(self, ms: Client) -> None:
        types = [EntryType.RAW, EntryType.SEMANTIC]
        elsewhere = ms.create_memory("elsewhere", memory_type=types, embd_id=EMBD, llm_id=LLM)
        ms.add_turn([elsewhere.id], user_input="green tea from the old app", agent_response="ok")
        memory = ms.create_memory("notes", memory_type=types, embd_id=EMBD, llm_id=LLM)
        self.memory_id = memory.id
        (live,) = ms.add_turn([memory.id], user_input="green tea at noon", agent_response="ok")
        self.live = live.message_id
        report = ms.import_memory(memory.id, ms.export_memory(elsewhere.id)[1:])
        (self.imported,) = (int(i) for i in report.id_map.values())
        stated = ms.add_entries(memory.id, [{"content": "The user drinks green tea daily."}])
        (outcome,) = stated.outcomes
        assert outcome.message_id is not None
        self.manual = outcome.message_id

    @property
    def every(self) -> set[int]:
        return {self.live, self.imported, self.manual}


@pytest.fixture
def seeded(sdk: Sdk, alice: Account) -> Seeded:
    return Seeded(sdk(alice.key))


def searched(api: TestClient, seeded: Seeded, **params: Any) -> set[int]:
    query = {"query": "green tea", "memory_id": seeded.memory_id, "similarity_threshold": 0}
    found = ok(api.get(f"{API}/messages/search", params={"top_n": 10, **query, **params}))
    return {f["message_id"] for f in found}


def test_search_keeps_only_the_origins_sent(as_alice: TestClient, seeded: Seeded) -> None:
    assert searched(as_alice, seeded) == seeded.every
    assert searched(as_alice, seeded, origin="manual") == {seeded.manual}
    assert searched(as_alice, seeded, origin="import") == {seeded.imported}
    both = {seeded.live, seeded.imported}
    assert searched(as_alice, seeded, origin="conversation,import") == both
    assert searched(as_alice, seeded, origin=["conversation", "import"]) == both
    assert searched(as_alice, seeded, origin="correction") == set()


def test_context_keeps_only_the_origins_sent(as_alice: TestClient, seeded: Seeded) -> None:
    body = {"query": "green tea", "memory_id": [seeded.memory_id], "similarity_threshold": 0}
    block = ok(as_alice.post(f"{API}/messages/context", json={**body, "origin": ["manual"]}))
    assert set(block["message_ids"]) == {seeded.manual}
    params = {**body, "memory_id": seeded.memory_id, "origin": "import"}
    block = ok(as_alice.get(f"{API}/messages/context", params=params))
    assert set(block["message_ids"]) == {seeded.imported}


def test_an_unknown_origin_is_refused_naming_the_field(
    as_alice: TestClient, seeded: Seeded
) -> None:
    params = {"query": "tea", "memory_id": seeded.memory_id, "origin": "rumour"}
    message = error(as_alice.get(f"{API}/messages/search", params=params), 400, 101)
    assert message.startswith("origin must be one of")
    listed = as_alice.get(f"{API}/memories/{seeded.memory_id}", params={"origin": "rumour"})
    assert error(listed, 400, 101).startswith("origin must be one of")


def test_the_messages_list_keeps_only_the_origins_sent(
    as_alice: TestClient, seeded: Seeded
) -> None:
    def turns(**params: Any) -> set[int]:
        page = ok(as_alice.get(f"{API}/memories/{seeded.memory_id}", params=params))
        return {m["message_id"] for m in page["messages"]["message_list"]}

    assert turns() == {seeded.live, seeded.imported}
    assert turns(origin="import") == {seeded.imported}
    assert turns(origin="conversation") == {seeded.live}


def test_the_sdk_sends_origin_everywhere(sdk: Sdk, alice: Account, seeded: Seeded) -> None:
    ms = sdk(alice.key)
    hits = ms.search("green tea", [seeded.memory_id], similarity_threshold=0, origin="manual")
    assert {h.entry.message_id for h in hits} == {seeded.manual}
    block = ms.context("green tea", [seeded.memory_id], similarity_threshold=0, origin=["import"])
    assert set(block.message_ids) == {seeded.imported}
    page = ms.list_messages(seeded.memory_id, origin=["conversation"])
    assert {e.message_id for e in page.items} == {seeded.live}

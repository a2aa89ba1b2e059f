"""Memories: RAGFlow's validation rules and limits, and bad input that changes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from recallery import Engine, EntryType, InvalidInput, Memory, NotFound, Principal
from recallery.extraction.prompts import default_system_prompt

BUILTIN = "BAAI/bge-small-en-v1.5@Builtin"


def create(engine: Engine, actor: Principal, **kw: Any) -> Memory:
    values: dict[str, Any] = {
        "name": "m",
        "memory_type": ["raw"],
        "embd_id": BUILTIN,
        "llm_id": "glm-4@ZHIPU-AI",
    }
    values.update(kw)
    return engine.create_memory(actor, **values)


def state(engine: Engine) -> tuple[int, int]:
    with engine.store.read() as r:
        memories = r.conn.execute("SELECT count(*) FROM memories")[0][0]
        events = r.conn.execute("SELECT count(*) FROM audit")[0][0]
    return int(memories), int(events)


def test_create_applies_defaults_and_generates_the_prompt(engine: Engine, alice: Principal) -> None:
    m = create(engine, alice, name="  Trip notes ", memory_type=["raw", "semantic", "semantic"])
    assert m.name == "Trip notes"
    assert m.memory_types == (EntryType.RAW, EntryType.SEMANTIC)
    assert (m.permissions.value, m.memory_size, m.forgetting_policy.value) == (
        "me",
        5242880,
        "FIFO",
    )
    assert m.temperature == 0.5 and m.storage_type == "table"
    assert m.system_prompt == default_system_prompt([EntryType.SEMANTIC])
    assert engine.get_memory(alice, m.id) == m


def test_duplicate_names_get_a_suffix_per_owner(
    engine: Engine, alice: Principal, bob: Principal
) -> None:
    names = [create(engine, alice, name="dup").name for _ in range(3)]
    assert names == ["dup", "dup(1)", "dup(2)"]
    assert create(engine, bob, name="dup").name == "dup"


@pytest.mark.parametrize(
    ("field", "kw"),
    [
        ("name", {"name": "   "}),
        ("name", {"name": "x" * 129}),
        ("name", {"name": None}),
        ("memory_type", {"memory_type": "raw"}),
        ("memory_type", {"memory_type": ["raw", "graph"]}),
        ("embd_id", {"embd_id": "no-provider"}),
        ("embd_id", {"embd_id": "model@UnconfiguredProvider"}),
        ("embd_id", {"embd_id": ""}),
        ("llm_id", {"llm_id": ""}),
        ("memory_size", {"memory_size": 0}),
        ("memory_size", {"memory_size": 10 * 1024 * 1024 + 1}),
        ("memory_size", {"memory_size": "big"}),
        ("temperature", {"temperature": 1.5}),
        ("temperature", {"temperature": "hot"}),
        ("permissions", {"permissions": "all"}),
        ("forgetting_policy", {"forgetting_policy": "fifo"}),
        ("colour", {"colour": "blue"}),
    ],
)
def test_bad_create_input_names_the_field_and_changes_nothing(
    engine: Engine, alice: Principal, field: str, kw: dict[str, Any]
) -> None:
    before = state(engine)
    with pytest.raises(InvalidInput) as err:
        create(engine, alice, **kw)
    assert err.value.field == field
    assert state(engine) == before


def test_ragflow_error_texts(engine: Engine, alice: Principal) -> None:
    with pytest.raises(InvalidInput, match=r"^Memory name cannot be empty or whitespace\.$"):
        create(engine, alice, name=" ")
    with pytest.raises(InvalidInput, match=r"^Memory type must be a list\.$"):
        create(engine, alice, memory_type="raw")
    with pytest.raises(InvalidInput, match=r"^Memory type '\{'graph'\}' is not supported\.$"):
        create(engine, alice, memory_type=["graph"])
    with pytest.raises(InvalidInput, match=r"range \(0, 10485760\] Bytes"):
        create(engine, alice, memory_size=-1)


def test_update_writes_only_changes_and_audits_them(engine: Engine, alice: Principal) -> None:
    m = create(engine, alice)
    same = engine.update_memory(alice, m.id, {"name": "m", "temperature": 0.5})
    assert same == m
    updated = engine.update_memory(
        alice, m.id, {"temperature": 0.2, "permissions": "team", "description": "d"}
    )
    assert (updated.temperature, updated.permissions.value, updated.description) == (
        0.2,
        "team",
        "d",
    )
    events = engine.audit_log(alice, memory_id=m.id, action="memory.update").items
    assert len(events) == 1
    assert events[0].before == {"temperature": 0.5, "permissions": "me", "description": None}


def test_changing_types_regenerates_a_default_prompt_only(engine: Engine, alice: Principal) -> None:
    m = create(engine, alice, memory_type=["raw", "semantic"])
    m2 = engine.update_memory(alice, m.id, {"memory_type": ["raw", "episodic"]})
    assert m2.system_prompt == default_system_prompt([EntryType.EPISODIC])
    engine.update_memory(alice, m.id, {"system_prompt": "custom"})
    m3 = engine.update_memory(alice, m.id, {"memory_type": ["raw", "procedural"]})
    assert m3.system_prompt == "custom"


def test_model_and_types_lock_once_the_memory_holds_entries(
    engine: Engine, alice: Principal
) -> None:
    m = create(engine, alice)
    engine.add_turn(alice, [m.id], user_input="hi", agent_response="hello")
    for change, field in (
        ({"embd_id": "other@Builtin"}, "embd_id"),
        ({"memory_type": ["raw", "semantic"]}, "memory_type"),
    ):
        with pytest.raises(InvalidInput, match="when memory isn't empty") as err:
            engine.update_memory(alice, m.id, change)
        assert err.value.field == field
    assert engine.get_memory(alice, m.id).embd_id == BUILTIN
    assert engine.update_memory(alice, m.id, {"llm_id": "gpt@OpenAI"}).llm_id == "gpt@OpenAI"


def test_bad_update_changes_nothing(engine: Engine, alice: Principal) -> None:
    m = create(engine, alice)
    with pytest.raises(InvalidInput) as err:
        engine.update_memory(alice, m.id, {"temperature": 0.3, "memory_size": 0})
    assert err.value.field == "memory_size"
    assert engine.get_memory(alice, m.id).temperature == 0.5


def test_list_filters_and_pages(engine: Engine, alice: Principal, bob: Principal) -> None:
    a = create(engine, alice, name="Alpha", memory_type=["raw", "semantic"])
    b = create(engine, alice, name="Beta")
    create(engine, bob, name="Alphabet soup", permissions="team")
    page = engine.list_memories(alice, keywords="alp")
    assert [m.id for m in page.items] == [a.id] and page.total == 1
    assert [m.id for m in engine.list_memories(alice, memory_types=["semantic"]).items] == [a.id]
    assert engine.list_memories(alice, page=1, page_size=1).total == 2
    first = engine.list_memories(alice, page=1, page_size=1).items
    second = engine.list_memories(alice, page=2, page_size=1).items
    assert {first[0].id, second[0].id} == {a.id, b.id}


def test_delete_memory_removes_it_and_its_entries(engine: Engine, alice: Principal) -> None:
    m = create(engine, alice)
    engine.add_turn(alice, [m.id], user_input="remember the walrus", agent_response="ok")
    engine.delete_memory(alice, m.id)
    with pytest.raises(NotFound):
        engine.get_memory(alice, m.id)
    with engine.store.read() as r:
        assert r.conn.execute("SELECT count(*) FROM entries")[0][0] == 0


@pytest.mark.parametrize("bad", ["", "xyz", "0" * 31, "G" * 32, 12, None])
def test_malformed_memory_ids_are_rejected(engine: Engine, alice: Principal, bad: object) -> None:
    with pytest.raises(InvalidInput) as err:
        engine.get_memory(alice, bad)
    assert err.value.field == "memory_id"

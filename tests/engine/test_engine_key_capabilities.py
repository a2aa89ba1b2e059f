"""Key capabilities at the engine: what a key may do travels with it (read, write, manage), a
missing one is Forbidden naming it, and nothing changes; every backend."""

from __future__ import annotations

import pytest

from recallery import Engine, Forbidden, InvalidInput, Memory, Principal, SearchRequest
from recallery.models import ALL_CAPABILITIES, Capability


def _key(engine: Engine, owner: Principal, *capabilities: str) -> Principal:
    _, key = engine.create_api_key(owner, owner.user_id, capabilities=list(capabilities))
    return engine.authenticate(key)


def _berlin(engine: Engine, alice: Principal, memory: Memory) -> int:
    (raw,) = engine.add_turn(
        alice, [memory.id], user_input="I moved to Berlin last spring.", agent_response="Noted."
    )
    return raw.message_id


def test_a_key_carries_its_capabilities(engine: Engine, alice: Principal) -> None:
    reader = _key(engine, alice, "read")
    assert reader.capabilities == frozenset({Capability.READ})
    assert reader.user_id == alice.user_id
    _, full = engine.create_api_key(alice, alice.user_id)
    assert engine.authenticate(full).capabilities == ALL_CAPABILITIES


def test_read_only_key_searches_but_changes_nothing(
    engine: Engine, alice: Principal, memory: Memory
) -> None:
    raw_id = _berlin(engine, alice, memory)
    reader = _key(engine, alice, "read")
    hits = engine.search(reader, SearchRequest("Berlin", (memory.id,)))
    assert [h.entry.message_id for h in hits] == [raw_id]

    with pytest.raises(Forbidden, match="'write' capability"):
        engine.add_turn(reader, [memory.id], user_input="I moved to Rome.", agent_response="ok")
    with pytest.raises(Forbidden, match="'write' capability"):
        engine.forget(reader, memory.id, raw_id)
    with pytest.raises(Forbidden, match="'write' capability"):
        engine.correct(reader, memory.id, raw_id, "I moved to Rome.")
    with pytest.raises(Forbidden, match="'manage' capability"):
        engine.erase(reader, memory.id, raw_id)

    page = engine.list_messages(alice, memory.id)
    assert [e.message_id for e in page.items] == [raw_id]
    entry, _ = engine.get_entry(alice, memory.id, raw_id)
    assert entry.forget_at is None and entry.retired_at is None
    assert "Berlin" in entry.content
    assert [e.message_id for e in engine.history(alice, memory.id, raw_id)] == [raw_id]


def test_write_key_without_read_cannot_search(
    engine: Engine, alice: Principal, memory: Memory
) -> None:
    _berlin(engine, alice, memory)
    writer = _key(engine, alice, "write")
    with pytest.raises(Forbidden, match="'read' capability"):
        engine.search(writer, SearchRequest("Berlin", (memory.id,)))
    written = engine.add_turn(writer, [memory.id], user_input="I like tea.", agent_response="ok")
    assert engine.list_messages(alice, memory.id).total == 2
    assert written[0].content.startswith("User Input: I like tea.")


def test_manage_is_needed_for_keys_memories_and_review(
    engine: Engine, alice: Principal, memory: Memory
) -> None:
    raw_id = _berlin(engine, alice, memory)
    agent = _key(engine, alice, "read", "write")
    with pytest.raises(Forbidden, match="'manage' capability"):
        engine.create_api_key(agent, alice.user_id, capabilities=["read"])
    with pytest.raises(Forbidden, match=r"'manage' capability.*cannot vouch for its own writes"):
        engine.review(agent, memory.id, raw_id, "rejected")
    with pytest.raises(Forbidden, match="'manage' capability"):
        engine.update_memory(agent, memory.id, {"description": "changed"})
    with pytest.raises(Forbidden, match="'manage' capability"):
        engine.create_memory(
            agent,
            name="more",
            memory_type=["raw"],
            embd_id="BAAI/bge-small-en-v1.5@Builtin",
            llm_id="glm-4-flash@ZHIPU-AI",
        )
    assert len(engine.list_api_keys(alice, alice.user_id)) == 1
    assert engine.get_memory(alice, memory.id).description is None
    entry, _ = engine.get_entry(alice, memory.id, raw_id)
    assert entry.trust.value == "unreviewed"
    assert engine.list_memories(alice).total == 1


def test_a_key_grants_no_more_than_its_creator_has(engine: Engine, alice: Principal) -> None:
    manager = _key(engine, alice, "manage", "read")
    with pytest.raises(Forbidden, match="lacks \\(write\\)"):
        engine.create_api_key(manager, alice.user_id, capabilities=["write"])
    with pytest.raises(Forbidden, match="lacks \\(write\\)"):
        engine.create_api_key(manager, alice.user_id)  # all, by default
    engine.create_api_key(manager, alice.user_id, capabilities=["read"])
    assert len(engine.list_api_keys(alice, alice.user_id)) == 2


@pytest.mark.parametrize("bad", [["read", "delete"], [], "everything", 3])
def test_unknown_capabilities_are_refused(engine: Engine, alice: Principal, bad: object) -> None:
    with pytest.raises(InvalidInput) as caught:
        engine.create_api_key(alice, alice.user_id, capabilities=bad)
    assert caught.value.field == "capabilities"
    assert engine.list_api_keys(alice, alice.user_id) == []


# --- answers carry content only to a key that may read it -----------------------------------


def test_a_manage_only_key_reviews_without_reading(
    engine: Engine, alice: Principal, memory: Memory
) -> None:
    (raw,) = engine.add_turn(
        alice,
        [memory.id],
        user_input="the vault code is 4471",
        agent_response="ok",
        user_id="carol",
        session_id="s-vault",
    )
    manager = _key(engine, alice, "manage")
    reviewed = engine.review(manager, memory.id, raw.message_id, "confirmed")
    assert reviewed.trust.value == "confirmed" and reviewed.message_id == raw.message_id
    assert (reviewed.content, reviewed.user_id, reviewed.session_id) == ("", "", "")
    again = engine.review(manager, memory.id, raw.message_id, "confirmed")
    assert "4471" not in again.content
    events = engine.audit_log(alice, memory_id=memory.id, action="entry.confirm").items
    assert len(events) == 2  # the second verdict is recorded too
    assert "4471" in engine.review(alice, memory.id, raw.message_id, "confirmed").content


def test_a_write_only_key_learns_no_provenance_from_a_correction(
    engine: Engine, alice: Principal, memory: Memory
) -> None:
    (raw,) = engine.add_turn(
        alice, [memory.id], user_input="secret", agent_response="ok", user_id="carol"
    )
    writer = _key(engine, alice, "write")
    new = engine.correct(writer, memory.id, raw.message_id, "replaced")
    assert (new.user_id, new.agent_id, new.session_id, new.content) == ("", "", "", "")
    assert engine.get_entry(alice, memory.id, new.message_id)[0].user_id == "carol"


def test_a_write_only_key_cannot_guess_stored_statements(engine: Engine, alice: Principal) -> None:
    """A key that may write but not read learns nothing from reconciliation: a guess that
    repeats a stored fact is answered as a new one is."""
    memory = engine.create_memory(
        alice, name="facts", memory_type=["raw", "semantic"], embd_id="x@Builtin", llm_id="y@Z"
    )
    stored = engine.add_entries(alice, memory.id, [{"content": "the vault code is 4471"}])
    (first,) = stored.outcomes
    writer = _key(engine, alice, "write")
    for guess in ("the vault code is 4471", "the vault code is 0000"):
        (outcome,) = engine.add_entries(writer, memory.id, [{"content": guess}]).outcomes
        assert (outcome.action, outcome.message_id, outcome.target) == ("stored", None, None)
        assert "4471" not in outcome.reason and str(first.message_id) not in outcome.reason
    # the owner, who may read, is told what happened: the repeat added no row
    (again,) = engine.add_entries(
        alice, memory.id, [{"content": "the vault code is 4471"}]
    ).outcomes
    assert again.action == "duplicate" and again.message_id == first.message_id

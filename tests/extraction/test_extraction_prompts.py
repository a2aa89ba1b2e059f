"""Prompts are code: versioned, one block per enabled type, a schema, overrides honoured."""

from __future__ import annotations

from datetime import UTC, datetime

from recallery import Engine, EntryType, Memory, Principal
from recallery.extraction import prompts, prompts_reconcile
from recallery.extraction.extractor import Candidate
from recallery.extraction.reconcile import Neighbour
from recallery.models import Entry

S, E, P = EntryType.SEMANTIC, EntryType.EPISODIC, EntryType.PROCEDURAL
NOW = datetime(2026, 3, 3, 8, 0, tzinfo=UTC)
RAW = Entry(
    message_id=7,
    memory_id="m" * 32,
    tenant_id="t",
    message_type=EntryType.RAW,
    content="User Input: I moved to Berlin last week.\nAgent Response: Nice!",
    valid_at=datetime(2026, 3, 2, 9, 0, tzinfo=UTC),
    recorded_at=NOW,
)


def memory(types: tuple[EntryType, ...] = (EntryType.RAW, S, E, P), **kw: object) -> Memory:
    return Memory(
        id="m" * 32,
        tenant_id="t",
        name="n",
        memory_types=types,
        embd_id="e@Builtin",
        llm_id="x@fake",
        **kw,  # type: ignore[arg-type]
    )


def test_one_block_per_enabled_type_in_fixed_order() -> None:
    text = prompts.default_system_prompt([P, EntryType.RAW, S])
    assert text.index("## semantic") < text.index("## procedural")
    assert "## episodic" not in text
    assert "Extract only these types: semantic, procedural." in text
    assert "At most 5 items per type" in prompts.default_system_prompt([S])
    assert "At most 3 items per type" in prompts.default_system_prompt([S], max_items=3)
    assert '"semantic": [' in text and "## Examples" in text
    assert prompts.default_system_prompt([EntryType.RAW]) == ""


def test_default_prompts_are_recognised_in_any_order() -> None:
    text = prompts.default_system_prompt([S, E])
    assert prompts.is_default_prompt(text, [E, S])
    assert prompts.is_default_prompt(None, [S]) and prompts.is_default_prompt("", [S])
    assert not prompts.is_default_prompt("Extract facts as JSON.", [S, E])
    assert not prompts.is_default_prompt(text, [S])


def test_the_schema_has_one_array_per_enabled_type() -> None:
    schema = prompts.response_schema([E, S])
    assert schema["required"] == ["semantic", "episodic"]
    assert schema["additionalProperties"] is False
    item = schema["properties"]["episodic"]["items"]
    assert item["required"] == ["content", "valid_at", "invalid_at"]
    assert item["properties"]["invalid_at"] == {"type": ["string", "null"]}


def test_the_request_gives_the_conversation_time_and_fences_the_turn() -> None:
    request = prompts.build_request(memory(temperature=0.2), RAW, NOW, 5)
    system, user = request.messages
    assert (system.role, user.role) == ("system", "user")
    assert system.content == prompts.default_system_prompt([S, E, P])
    assert "<<<CONVERSATION\n" + RAW.content + "\nCONVERSATION>>>" in user.content
    assert "Conversation time: 2026-03-02 09:00:00 (UTC)" in user.content
    assert "Current time: 2026-03-03 08:00:00 (UTC)" in user.content
    assert "resolve relative times against the conversation time" in system.content
    assert request.temperature == 0.2
    assert request.schema == prompts.response_schema([S, E, P])


def test_a_stored_default_prompt_is_regenerated_and_a_custom_one_kept() -> None:
    old_default = prompts.default_system_prompt([S, E], max_items=5)
    stale = memory((EntryType.RAW, S), system_prompt=old_default)
    assert prompts.system_prompt(stale, 5) == prompts.default_system_prompt([S])
    custom = memory(system_prompt="Only facts, JSON.")
    assert prompts.system_prompt(custom, 5) == "Only facts, JSON."


def test_a_user_prompt_sends_two_user_messages() -> None:
    request = prompts.build_request(memory(user_prompt="Focus on places."), RAW, NOW, 5)
    assert [m.role for m in request.messages] == ["system", "user", "user"]
    assert request.messages[1].content == "Focus on places."
    assert request.messages[2].content == (
        f"Conversation: {RAW.content}\n"
        "Conversation time: 2026-03-02 09:00:00\n"
        "Current time: 2026-03-03 08:00:00"
    )


def test_the_engine_regenerates_a_default_prompt_when_types_change(
    engine: Engine, alice: Principal
) -> None:
    m = engine.create_memory(
        alice, name="m", memory_type=["raw", "semantic"], embd_id="e@Builtin", llm_id="x@fake"
    )
    assert m.system_prompt == prompts.default_system_prompt([S])
    updated = engine.update_memory(alice, m.id, {"memory_type": ["raw", "semantic", "episodic"]})
    assert updated.system_prompt == prompts.default_system_prompt([S, E])
    engine.update_memory(alice, m.id, {"system_prompt": "Mine."})
    kept = engine.update_memory(alice, m.id, {"memory_type": ["raw", "procedural"]})
    assert kept.system_prompt == "Mine."


def test_the_reconcile_prompt_numbers_the_entries_it_shows() -> None:
    candidate = Candidate(S, "The user lives in Berlin", datetime(2026, 3, 2, tzinfo=UTC))
    options = [Neighbour(41, "The user lives in Lisbon", 0.8, datetime(2025, 1, 1, tzinfo=UTC))]
    request = prompts_reconcile.build_request(candidate, options)
    user = request.messages[1].content
    assert "New candidate (valid from 2026-03-02 00:00:00): The user lives in Berlin" in user
    assert "1. (valid from 2025-01-01 00:00:00) The user lives in Lisbon" in user
    assert "41" not in user  # numbers, never ids
    assert request.schema == prompts_reconcile.response_schema()
    assert request.temperature == 0.0
    assert prompts_reconcile.PROMPT_VERSION.startswith("reconcile-")

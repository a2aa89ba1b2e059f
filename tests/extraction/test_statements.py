"""Entries an agent states directly (``add_entries``, origin manual) are reconciled like
extraction's output, each outcome checked by searching afterwards; and a turn's task status."""

from __future__ import annotations

import pytest
from tests.support.extraction import judgement, make_memory, say

from recallery import Engine, Forbidden, InvalidInput, Memory, NotFound, Principal, SearchRequest
from recallery.errors import ChatError
from recallery.models import EntryType, JobState, Origin
from recallery.requests import EntryInput
from recallery.testing import FakeLLM, FrozenClock, Reply

SEMANTIC = frozenset({EntryType.SEMANTIC})


def facts_found(engine: Engine, actor: Principal, memory: Memory, query: str) -> list[str]:
    hits = engine.search(
        actor, SearchRequest(query, (memory.id,), types=SEMANTIC, similarity_threshold=0.0)
    )
    return [h.entry.content for h in hits]


def state(engine: Engine, actor: Principal, memory: Memory, text: str, **kw: object) -> object:
    (outcome,) = engine.add_entries(actor, memory.id, [{"content": text}], **kw).outcomes
    return outcome


def test_a_stated_fact_is_a_manual_entry(engine: Engine, alice: Principal, mem: Memory) -> None:
    result = engine.add_entries(
        alice,
        mem.id,
        [
            EntryInput("The user lives in Lisbon"),
            {"content": "Water the plants on Sundays", "message_type": "procedural"},
        ],
        user_id="u-1",
        agent_id="planner",
    )
    assert [o.action for o in result.outcomes] == ["add", "add"]
    assert result.counts() == {"add": 2, "supersede": 0, "duplicate": 0, "suppress": 0}
    first = result.outcomes[0].message_id
    entry, _ = engine.get_entry(alice, mem.id, first)
    assert (entry.origin, entry.message_type, entry.user_id, entry.agent_id, entry.source_id) == (
        Origin.MANUAL,
        EntryType.SEMANTIC,
        "u-1",
        "planner",
        None,
    )
    assert facts_found(engine, alice, mem, "where does the user live") == [
        "The user lives in Lisbon"
    ]


def test_a_repeated_fact_adds_no_row_and_its_evidence_grows(
    engine: Engine, alice: Principal, mem: Memory
) -> None:
    told = say(engine, alice, mem, "I live in Lisbon.")
    first = state(engine, alice, mem, "The user lives in Lisbon", source_id=told.message_id)
    again = say(engine, alice, mem, "Still in Lisbon, yes.")
    repeat = state(engine, alice, mem, "the user lives in lisbon", source_id=again.message_id)

    assert (repeat.action, repeat.message_id, repeat.target) == (
        "duplicate",
        first.message_id,
        first.message_id,
    )
    assert engine.evidence(alice, mem.id, first.message_id) == [told.message_id, again.message_id]
    assert facts_found(engine, alice, mem, "user lives Lisbon") == ["The user lives in Lisbon"]

    sourceless = state(engine, alice, mem, "The user lives in Lisbon")
    assert sourceless.action == "duplicate"
    events = engine.audit_log(alice, memory_id=mem.id, action="entry.dedupe").items
    assert [(e.message_id, e.reason) for e in events] == [
        (first.message_id, f"repeated in a statement by {alice.user_id}"),
        (first.message_id, f"repeated in turn {again.message_id}"),
    ]
    assert facts_found(engine, alice, mem, "user lives Lisbon") == ["The user lives in Lisbon"]


def test_a_contradiction_supersedes_the_old_fact(
    engine: Engine, alice: Principal, mem: Memory, llm: FakeLLM, clock: FrozenClock
) -> None:
    lisbon = state(engine, alice, mem, "The user lives in Lisbon")
    clock.advance(days=30)
    llm.push(judgement("supersedes", 1))
    berlin = state(engine, alice, mem, "The user lives in Berlin")

    assert (berlin.action, berlin.target) == ("supersede", lisbon.message_id)
    assert facts_found(engine, alice, mem, "where does the user live") == [
        "The user lives in Berlin"
    ]
    assert "The user lives in Lisbon" not in facts_found(engine, alice, mem, "user lives Lisbon")
    old, new = engine.history(alice, mem.id, berlin.message_id)
    assert (old.retired_at, old.superseded_by, old.invalid_at) == (
        clock.now(),
        new.message_id,
        new.valid_at,
    )
    assert len(llm.chat_requests()) == 1


def test_a_fact_matching_a_rejected_one_is_dropped(
    engine: Engine, alice: Principal, mem: Memory
) -> None:
    jazz = state(engine, alice, mem, "The user likes jazz")
    engine.review(alice, mem.id, jazz.message_id, "rejected")
    dropped = state(engine, alice, mem, "The user likes jazz")

    assert (dropped.action, dropped.message_id, dropped.target) == (
        "suppress",
        None,
        jazz.message_id,
    )
    assert facts_found(engine, alice, mem, "what music does the user like") == []
    assert engine.audit_log(alice, memory_id=mem.id, action="entry.add").total == 1


def test_without_a_chat_model_a_judgement_becomes_an_add_and_says_so(
    engine: Engine, alice: Principal
) -> None:
    memory = make_memory(engine, alice, llm_id="glm-4-flash@ZHIPU-AI")
    state(engine, alice, memory, "The user lives in Lisbon")
    result = engine.add_entries(alice, memory.id, [{"content": "The user lives in Berlin"}])

    (outcome,) = result.outcomes
    assert outcome.action == "add" and "added without judgement" in outcome.reason
    assert len(result.notes) == 1 and "no chat model" in result.notes[0]
    assert sorted(facts_found(engine, alice, memory, "user lives")) == [
        "The user lives in Berlin",
        "The user lives in Lisbon",
    ]


def test_stated_entries_are_checked(
    engine: Engine, alice: Principal, bob: Principal, mem: Memory
) -> None:
    raw_only = make_memory(engine, alice, types=["raw"])
    with pytest.raises(InvalidInput, match="does not keep semantic"):
        engine.add_entries(alice, raw_only.id, [{"content": "A fact"}])
    with pytest.raises(InvalidInput) as caught:
        engine.add_entries(alice, mem.id, [{"content": "A fact", "kind": "semantic"}])
    assert caught.value.field == "entries[0].kind"
    with pytest.raises(NotFound):
        engine.add_entries(bob, mem.id, [{"content": "Bob was here"}])
    _, key = engine.create_api_key(alice, alice.user_id, capabilities=["read"])
    with pytest.raises(Forbidden, match="'write' capability"):
        engine.add_entries(engine.authenticate(key), mem.id, [{"content": "A fact"}])
    theirs = make_memory(engine, bob)
    bobs_turn = say(engine, bob, theirs, "I live in Oslo.")
    with pytest.raises(NotFound, match="Source turn"):
        engine.add_entries(alice, mem.id, [{"content": "A"}], source_id=bobs_turn.message_id)
    assert facts_found(engine, alice, mem, "fact Bob was here") == []


def test_task_status_is_the_turns_extraction_job(
    engine: Engine, alice: Principal, bob: Principal, mem: Memory
) -> None:
    raw = say(engine, alice, mem, "I live in Lisbon.")
    job = engine.task_status(alice, mem.id, raw.message_id)
    assert job is not None
    assert (job.message_id, job.state, job.kind) == (raw.message_id, JobState.QUEUED, "extraction")
    with pytest.raises(NotFound):
        engine.task_status(bob, mem.id, raw.message_id)
    plain = make_memory(engine, alice, types=["raw"])
    unextracted = say(engine, alice, plain, "Hello.")
    assert engine.task_status(alice, plain.id, unextracted.message_id) is None
    with pytest.raises(NotFound):
        engine.task_status(alice, plain.id, raw.message_id)  # another memory's turn


def test_a_judged_statement_is_metered_and_counted_in_the_memorys_costs(
    engine: Engine, alice: Principal, mem: Memory, llm: FakeLLM, clock: FrozenClock
) -> None:
    plain = engine.add_entries(alice, mem.id, [{"content": "The user lives in Lisbon"}])
    assert plain.usage.calls == 0
    assert engine.extraction_costs(alice, mem.id).calls == 0
    assert engine.jobs(alice, mem.id).total == 0

    clock.advance(days=30)
    llm.push(judgement("supersedes", 1))
    judged = engine.add_entries(alice, mem.id, [{"content": "The user lives in Berlin"}])

    assert judged.usage.calls == 1 and judged.usage.prompt_tokens > 0
    assert judged.usage.completion_tokens > 0
    costs = engine.extraction_costs(alice, mem.id)
    assert (costs.jobs, costs.calls) == (1, 1)
    assert (costs.prompt_tokens, costs.completion_tokens) == (
        judged.usage.prompt_tokens,
        judged.usage.completion_tokens,
    )
    assert dict(costs.outcomes) == {"done": 1}
    (job,) = engine.jobs(alice, mem.id).items
    assert (job.kind, job.state, job.message_id) == ("statement", JobState.DONE, None)
    assert "1 judged by the chat model" in job.progress_msg


def test_a_failed_judgement_is_recorded_with_its_cost_and_raised(
    engine: Engine, alice: Principal, mem: Memory, llm: FakeLLM
) -> None:
    state(engine, alice, mem, "The user lives in Lisbon")
    llm.push(Reply(status=401))
    with pytest.raises(ChatError):
        engine.add_entries(alice, mem.id, [{"content": "The user lives in Berlin"}])

    costs = engine.extraction_costs(alice, mem.id)
    assert (costs.jobs, costs.calls, dict(costs.outcomes)) == (1, 1, {"failed": 1})
    assert facts_found(engine, alice, mem, "where does the user live") == [
        "The user lives in Lisbon"
    ]

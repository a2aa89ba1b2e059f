"""Extraction end to end: a turn written through the engine, a worker, the fake LLM over HTTP,
and what ends up in the store, the job and the audit log."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from tests.support.extraction import (
    CONFIG,
    build_engine,
    extracted,
    facts,
    job_of,
    judgement,
    make_memory,
    say,
)

from recallery import Engine, EntryType, JobState, Memory, Principal, SearchRequest, Trust
from recallery.jobs import Worker
from recallery.models import Origin
from recallery.policies.capacity import entry_size
from recallery.store.base import Store
from recallery.testing import DeterministicEmbedder, FakeLLM, FrozenClock, Reply
from recallery.testing.fake_llm import Responder

S, E, P = EntryType.SEMANTIC, EntryType.EPISODIC, EntryType.PROCEDURAL


def semantic_search(engine: Engine, actor: Principal, memory: Memory, query: str) -> list[str]:
    hits = engine.search(
        actor,
        SearchRequest(query, (memory.id,), types=frozenset({S}), similarity_threshold=0.0),
    )
    return [h.entry.content for h in hits]


def audit(engine: Engine, actor: Principal, memory: Memory, action: str) -> list[tuple[int, str]]:
    events = engine.audit_log(actor, memory_id=memory.id, action=action).items
    return sorted((e.message_id or 0, e.reason) for e in events)


# --- each type, with its source ------------------------------------------------------------


def test_each_type_is_extracted_with_its_source_turn(
    engine: Engine, alice: Principal, mem: Memory, llm: FakeLLM, worker: Worker
) -> None:
    raw = say(
        engine, alice, mem, "I'm a nurse; yesterday I ran a half marathon. Reply in Portuguese."
    )
    llm.push(
        facts(
            semantic=["The user works as a nurse"],
            episodic=["The user ran a half marathon"],
            procedural=["Answer the user in Portuguese"],
        )
    )
    assert worker.run_once()
    entries = extracted(engine, mem)
    assert [(e.message_type, e.content) for e in entries] == [
        (S, "The user works as a nurse"),
        (E, "The user ran a half marathon"),
        (P, "Answer the user in Portuguese"),
    ]
    for e in entries:
        assert (e.source_id, e.origin, e.trust) == (
            raw.message_id,
            Origin.EXTRACTION,
            Trust.UNREVIEWED,
        )
        assert e.valid_at == raw.valid_at  # valid_at null: the conversation time
    job = job_of(engine, raw)
    assert (job.state, job.outcome, job.progress) == (JobState.DONE, "done", 1.0)
    assert job.result["counts"] == {"added": 3, "deduped": 0, "superseded": 0, "suppressed": 0}
    assert job.result["entry_ids"]["added"] == [e.message_id for e in entries]
    adds = engine.audit_log(alice, memory_id=mem.id, action="entry.add").items
    by_extraction = [a for a in adds if a.actor == "extraction"]
    assert sorted(a.message_id for a in by_extraction) == [e.message_id for e in entries]
    assert all(a.after["source_id"] == raw.message_id for a in by_extraction)
    assert all(a.after["origin"] == "extraction" for a in by_extraction)
    page = engine.list_messages(alice, mem.id)
    assert [e.message_id for e in page.extracted[raw.message_id]] == [e.message_id for e in entries]
    assert page.jobs[raw.message_id].outcome == "done"


def test_extracted_entries_inherit_the_turns_provenance_and_are_embedded_in_one_batch(
    engine: Engine,
    alice: Principal,
    mem: Memory,
    llm: FakeLLM,
    worker: Worker,
    embedder: DeterministicEmbedder,
) -> None:
    raw = say(
        engine, alice, mem, "I like tea and jazz.", user_id="u1", agent_id="a1", session_id="s1"
    )
    llm.push(facts(semantic=["The user likes tea", "The user likes jazz"]))
    embedder.calls.clear()
    worker.run_once()
    assert embedder.calls == [2]
    for e in extracted(engine, mem):
        assert (e.user_id, e.agent_id, e.session_id) == ("u1", "a1", "s1")
    assert raw.user_id == "u1"


def test_the_raw_turn_is_searchable_before_extraction_runs(
    engine: Engine, alice: Principal, mem: Memory, llm: FakeLLM
) -> None:
    raw = say(engine, alice, mem, "My cat is called Miso.")
    assert job_of(engine, raw).state is JobState.QUEUED  # no worker has run
    assert llm.requests == []
    hits = engine.search(alice, SearchRequest("cat Miso", (mem.id,), similarity_threshold=0.0))
    assert [h.entry.message_id for h in hits] == [raw.message_id]


# --- honest outcomes -----------------------------------------------------------------------


def run_one(
    engine: Engine, worker: Worker, alice: Principal, mem: Memory, llm: FakeLLM, reply: object
):
    raw = say(engine, alice, mem, "I live in Berlin.")
    llm.push(reply if isinstance(reply, Reply) else Reply.json(reply))
    assert worker.run_once()
    return raw, job_of(engine, raw)


def assert_failed_and_nothing_lost(
    engine: Engine, alice: Principal, mem: Memory, raw_id: int
) -> None:
    assert extracted(engine, mem) == []
    hits = engine.search(alice, SearchRequest("Berlin", (mem.id,), similarity_threshold=0.0))
    assert [h.entry.message_id for h in hits] == [raw_id]


def test_malformed_json_is_unparseable(
    engine: Engine, alice: Principal, mem: Memory, llm: FakeLLM, worker: Worker
) -> None:
    raw, job = run_one(engine, worker, alice, mem, llm, Reply.text("The user lives in Berlin!"))
    assert (job.state, job.outcome, job.progress) == (JobState.FAILED, "unparseable", -1.0)
    assert "Extraction unparseable: reply is not JSON" in job.progress_msg
    assert job.result["outcome"] == "unparseable"
    assert_failed_and_nothing_lost(engine, alice, mem, raw.message_id)


def test_an_unknown_type_is_invalid(
    engine: Engine, alice: Principal, mem: Memory, llm: FakeLLM, worker: Worker
) -> None:
    reply = {**facts(semantic=["The user lives in Berlin"]), "opinion": []}
    raw, job = run_one(engine, worker, alice, mem, llm, reply)
    assert (job.state, job.outcome, job.progress) == (JobState.FAILED, "invalid", -1.0)
    assert job.result["problems"] == ["type 'opinion' is not a memory type"]
    assert_failed_and_nothing_lost(engine, alice, mem, raw.message_id)


def test_a_type_the_memory_did_not_enable_is_invalid(
    engine: Engine, alice: Principal, llm: FakeLLM, worker: Worker
) -> None:
    semantic_only = make_memory(engine, alice, ["raw", "semantic"])
    reply = facts(semantic=["The user lives in Berlin"], procedural=["Be brief"])
    raw, job = run_one(engine, worker, alice, semantic_only, llm, reply)
    assert (job.outcome, job.progress) == ("invalid", -1.0)
    assert job.result["problems"] == [
        "type 'episodic' is not enabled for this memory",
        "type 'procedural' is not enabled for this memory",
    ]
    assert_failed_and_nothing_lost(engine, alice, semantic_only, raw.message_id)


def test_too_many_items_is_invalid(
    engine: Engine, alice: Principal, mem: Memory, llm: FakeLLM, worker: Worker
) -> None:
    reply = facts(semantic=[f"The user likes colour {i}" for i in range(6)])
    raw, job = run_one(engine, worker, alice, mem, llm, reply)
    assert job.outcome == "invalid"
    assert job.result["problems"] == ["semantic has 6 items, more than the cap of 5"]
    assert_failed_and_nothing_lost(engine, alice, mem, raw.message_id)


def test_an_empty_reply_is_empty_not_done(
    engine: Engine, alice: Principal, mem: Memory, llm: FakeLLM, worker: Worker
) -> None:
    _, job = run_one(engine, worker, alice, mem, llm, facts())
    assert (job.state, job.outcome, job.progress) == (JobState.DONE, "empty", 1.0)
    assert job.progress_msg.endswith("No memory extracted from raw message.")


def test_http_500_is_retried_then_failed(
    engine: Engine, alice: Principal, mem: Memory, llm: FakeLLM, worker: Worker, clock: FrozenClock
) -> None:
    raw = say(engine, alice, mem, "I live in Berlin.")
    llm.push(*[Reply.http_error(500)] * 3)
    assert worker.run_until_idle() == 1
    clock.advance(seconds=10)
    assert worker.run_until_idle() == 1
    clock.advance(seconds=20)
    assert worker.run_until_idle() == 1
    job = job_of(engine, raw)
    assert (job.state, job.outcome, job.progress, job.attempts) == (
        JobState.PARKED,
        "failed",
        -1.0,
        3,
    )
    assert job.progress_msg.count("HTTP 500") == 3
    assert job.progress_msg.splitlines()[-1].endswith(
        f"Attempt 3 failed: chat call to {llm.url} failed with HTTP 500: internal server error"
    )
    assert worker.run_until_idle() == 0  # parked jobs stay parked
    assert_failed_and_nothing_lost(engine, alice, mem, raw.message_id)


def test_a_timeout_is_retried_then_failed(
    store: Store,
    embedder: DeterministicEmbedder,
    clock: FrozenClock,
    llm: FakeLLM,
    alice: Principal,
    mem: Memory,
) -> None:
    impatient = build_engine(store, embedder, clock, llm, timeout=0.2)
    raw = say(impatient, alice, mem, "I live in Berlin.")
    llm.push(*[Reply.slow(30.0)] * 3)
    worker = Worker(impatient, config=CONFIG)
    for _ in range(3):
        assert worker.run_once()
        clock.advance(seconds=CONFIG.backoff_max_s)
    job = job_of(impatient, raw)
    assert (job.state, job.outcome, job.progress) == (JobState.PARKED, "failed", -1.0)
    assert job.progress_msg.count("timed out after 0.2s") == 3
    assert_failed_and_nothing_lost(impatient, alice, mem, raw.message_id)
    impatient.usage.close()


def test_no_chat_model_configured_is_skipped_and_says_why(
    engine: Engine, alice: Principal, llm: FakeLLM, worker: Worker
) -> None:
    unconfigured = make_memory(engine, alice, llm_id="glm-4-flash@ZHIPU-AI")
    raw = say(engine, alice, unconfigured, "I live in Berlin.")
    assert worker.run_once()
    job = job_of(engine, raw)
    assert (job.state, job.outcome, job.progress) == (JobState.PARKED, "skipped", -1.0)
    assert "no chat model" in job.progress_msg
    assert "RECALLERY_PROVIDER_ZHIPU_AI_BASE_URL" in job.progress_msg
    assert llm.requests == []


def test_a_turn_forgotten_before_extraction_is_skipped(
    engine: Engine, alice: Principal, mem: Memory, llm: FakeLLM, worker: Worker
) -> None:
    raw = say(engine, alice, mem, "I live in Berlin.")
    engine.forget(alice, mem.id, raw.message_id)
    assert worker.run_once()
    assert job_of(engine, raw).outcome == "skipped"
    assert llm.requests == []


def test_an_erased_turn_takes_its_job_with_it(
    engine: Engine, alice: Principal, mem: Memory, worker: Worker
) -> None:
    raw = say(engine, alice, mem, "I live in Berlin.")
    engine.erase(alice, mem.id, raw.message_id)
    assert not worker.run_once()


# --- consolidation -------------------------------------------------------------------------


def test_a_repeated_fact_adds_no_row_and_its_evidence_grows(
    engine: Engine, alice: Principal, mem: Memory, llm: FakeLLM, worker: Worker
) -> None:
    first = say(engine, alice, mem, "I live in Berlin.")
    second = say(engine, alice, mem, "As I said, I'm in Berlin.")
    llm.push(
        facts(semantic=["The user lives in Berlin"]), facts(semantic=["The user lives in Berlin."])
    )
    assert worker.run_until_idle() == 2
    (fact,) = extracted(engine, mem)
    assert fact.source_id == first.message_id
    assert engine.evidence(alice, mem.id, fact.message_id) == [first.message_id, second.message_id]
    job = job_of(engine, second)
    assert job.result["counts"] == {"added": 0, "deduped": 1, "superseded": 0, "suppressed": 0}
    assert audit(engine, alice, mem, "entry.dedupe") == [
        (fact.message_id, f"repeated in turn {second.message_id}")
    ]
    assert len(llm.requests) == 2  # the same text needs no judgement call


def test_a_moved_user_supersedes_the_old_city(
    engine: Engine, alice: Principal, mem: Memory, llm: FakeLLM, worker: Worker, clock: FrozenClock
) -> None:
    say(engine, alice, mem, "I live in Lisbon.")
    llm.push(facts(semantic=["The user lives in Lisbon"]))
    worker.run_once()
    (lisbon,) = extracted(engine, mem)
    clock.advance(days=30)
    moved = say(engine, alice, mem, "I moved from Lisbon to Berlin.")
    llm.push(facts(semantic=["The user lives in Berlin"]), judgement("supersedes", 1))
    worker.run_once()

    (berlin,) = extracted(engine, mem)
    assert (berlin.content, berlin.supersedes, berlin.source_id) == (
        "The user lives in Berlin",
        lisbon.message_id,
        moved.message_id,
    )
    assert (
        semantic_search(engine, alice, mem, "where does the user live")[0]
        == "The user lives in Berlin"
    )
    assert "The user lives in Lisbon" not in semantic_search(
        engine, alice, mem, "user lives Lisbon"
    )
    history = engine.history(alice, mem.id, berlin.message_id)
    assert [e.content for e in history] == ["The user lives in Lisbon", "The user lives in Berlin"]
    old = history[0]
    assert (old.retired_at, old.superseded_by, old.invalid_at) == (
        clock.now(),
        berlin.message_id,
        berlin.valid_at,
    )
    job = job_of(engine, moved)
    assert job.result["counts"] == {"added": 1, "deduped": 0, "superseded": 1, "suppressed": 0}
    assert job.result["reconcile_version"].startswith("reconcile-")
    assert audit(engine, alice, mem, "entry.supersede") == [
        (
            lisbon.message_id,
            f"contradicted by entry {berlin.message_id} from turn {moved.message_id}",
        )
    ]
    judged = llm.chat_requests()[-1]
    assert (
        "1. (valid from 2026-01-01 12:00:00) The user lives in Lisbon"
        in judged["messages"][1]["content"]
    )
    assert judged["response_format"]["json_schema"]["name"] == "reconcile_decision"


def test_a_second_fact_on_the_same_topic_is_added_when_judged_new(
    engine: Engine, alice: Principal, mem: Memory, llm: FakeLLM, worker: Worker
) -> None:
    say(engine, alice, mem, "I like jazz.")
    say(engine, alice, mem, "I like rock too.")
    llm.push(facts(semantic=["The user likes jazz"]))
    llm.push(facts(semantic=["The user likes rock"]), judgement("add"))
    worker.run_until_idle()
    assert [e.content for e in extracted(engine, mem)] == [
        "The user likes jazz",
        "The user likes rock",
    ]


def test_a_judgement_naming_an_entry_it_was_not_shown_is_an_add(
    engine: Engine, alice: Principal, mem: Memory, llm: FakeLLM, worker: Worker
) -> None:
    say(engine, alice, mem, "I like jazz.")
    second = say(engine, alice, mem, "I like rock.")
    llm.push(facts(semantic=["The user likes jazz"]))
    llm.push(facts(semantic=["The user likes rock"]), judgement("supersedes", 7))
    worker.run_until_idle()
    assert len(extracted(engine, mem)) == 2  # nothing retired
    assert "judgement names entry '7', not one shown; added" in job_of(engine, second).progress_msg


def test_a_rejected_fact_is_not_recreated(
    engine: Engine, alice: Principal, mem: Memory, llm: FakeLLM, worker: Worker
) -> None:
    say(engine, alice, mem, "I love durian.")
    llm.push(facts(semantic=["The user loves durian"]))
    worker.run_once()
    (fact,) = extracted(engine, mem)
    engine.review(alice, mem.id, fact.message_id, "rejected", reason="not true")

    again = say(engine, alice, mem, "I love durian.")
    llm.push(facts(semantic=["The user loves durian"]))
    worker.run_once()
    assert [e.message_id for e in extracted(engine, mem)] == [fact.message_id]
    job = job_of(engine, again)
    assert (job.outcome, job.result["counts"]["suppressed"]) == ("done", 1)
    assert f"suppress (matches rejected entry {fact.message_id})" in job.progress_msg
    assert engine.evidence(alice, mem.id, fact.message_id) == [fact.source_id]


# --- prompts honoured ----------------------------------------------------------------------


def test_the_prompt_carries_the_conversation_time_and_the_schema(
    engine: Engine, alice: Principal, mem: Memory, llm: FakeLLM, worker: Worker, clock: FrozenClock
) -> None:
    clock.advance(days=3)
    raw = say(engine, alice, mem, "Yesterday I met Ana.", conversation_time="2026-01-02T18:30:00Z")
    llm.push(
        {
            "semantic": [],
            "procedural": [],
            "episodic": [
                {"content": "The user met Ana", "valid_at": "2026-01-01", "invalid_at": None}
            ],
        }
    )
    worker.run_once()
    (sent,) = llm.requests
    system, user = sent["messages"]
    assert system["role"] == "system" and "## semantic" in system["content"]
    assert "Conversation time: 2026-01-02 18:30:00 (UTC)" in user["content"]
    assert "Current time: 2026-01-04 12:00:00 (UTC)" in user["content"]
    assert raw.content in user["content"]
    assert sent["temperature"] == mem.temperature
    schema = sent["response_format"]["json_schema"]
    assert schema["strict"] is True
    assert schema["schema"]["required"] == ["semantic", "episodic", "procedural"]
    (met,) = extracted(engine, mem)
    assert met.valid_at == datetime(2026, 1, 1, tzinfo=UTC)


def test_custom_prompts_and_temperature_are_honoured(
    engine: Engine, alice: Principal, llm: FakeLLM, worker: Worker
) -> None:
    custom = make_memory(
        engine,
        alice,
        ["raw", "semantic"],
        system_prompt="Extract facts as JSON.",
        user_prompt="Be terse.",
        temperature=0.1,
    )
    raw = say(engine, alice, custom, "I live in Berlin.")
    llm.push(
        {
            "semantic": [
                {"content": "The user lives in Berlin", "valid_at": None, "invalid_at": None}
            ]
        }
    )
    worker.run_once()
    assert job_of(engine, raw).outcome == "done"
    (sent,) = llm.requests
    assert [m["role"] for m in sent["messages"]] == ["system", "user", "user"]
    assert sent["messages"][0]["content"] == "Extract facts as JSON."
    assert sent["messages"][1]["content"] == "Be terse."
    assert sent["messages"][2]["content"].startswith("Conversation: User Input: I live in Berlin.")
    assert sent["temperature"] == 0.1
    assert list(sent["response_format"]["json_schema"]["schema"]["properties"]) == ["semantic"]


# --- capacity and cost ---------------------------------------------------------------------


def test_extraction_makes_room_by_the_memorys_policy(
    engine: Engine, alice: Principal, llm: FakeLLM, worker: Worker
) -> None:
    turn = "User Input: {}\nAgent Response: Noted."
    old_text, new_text, fact = "I live in Berlin.", "I moved to Paris.", "The user lives in Paris"
    budget = (
        sum(entry_size(t, 64) for t in (turn.format(old_text), turn.format(new_text), fact)) - 1
    )
    small = make_memory(engine, alice, memory_size=budget)
    old = say(engine, alice, small, old_text)
    new = say(engine, alice, small, new_text)
    llm.push(facts(), facts(semantic=[fact]))
    assert worker.run_until_idle() == 2
    assert [e.content for e in extracted(engine, small)] == [fact]
    page = engine.list_messages(alice, small.id)
    assert [e.message_id for e in page.items] == [new.message_id]  # the oldest turn made room
    assert [m for m, _ in audit(engine, alice, small, "entry.evict")] == [old.message_id]


def test_costs_are_recorded_per_job_and_summed_per_memory(
    engine: Engine, alice: Principal, mem: Memory, llm: FakeLLM, worker: Worker
) -> None:
    say(engine, alice, mem, "I live in Lisbon.")
    say(engine, alice, mem, "I moved to Berlin.")
    say(engine, alice, mem, "Nothing to note.")
    llm.push(facts(semantic=["The user lives in Lisbon"]))
    llm.push(facts(semantic=["The user lives in Berlin"]), judgement("supersedes", 1))
    llm.push(Reply.text("not json"))
    worker.run_until_idle()
    jobs = engine.jobs(alice, mem.id).items
    assert sorted(j.result["llm"]["calls"] for j in jobs) == [1, 1, 2]
    for j in jobs:
        assert j.result["llm"]["prompt_tokens"] > 100
        assert j.result["llm"]["completion_tokens"] > 0
    costs = engine.extraction_costs(alice, mem.id)
    assert (costs.jobs, costs.calls) == (3, 4)
    assert costs.prompt_tokens == sum(j.result["llm"]["prompt_tokens"] for j in jobs)
    assert costs.completion_tokens == sum(j.result["llm"]["completion_tokens"] for j in jobs)
    assert dict(costs.outcomes) == {"done": 2, "unparseable": 1}


# --- decisions made outside the write are checked again inside it ---------------------------


def scripted(
    replies: dict[str, dict[str, object]], during_judgement: Callable[[], None]
) -> Responder:
    """Extraction replies by the turn's text; the first judgement call runs
    ``during_judgement`` first (another worker or a reviewer acting meanwhile), then says add."""
    calls: list[str] = []

    def respond(body: dict[str, Any]) -> Reply:
        schema = body["response_format"]["json_schema"]["name"]
        user = body["messages"][-1]["content"]
        if schema == "reconcile_decision":
            calls.append(user)
            if len(calls) == 1:
                during_judgement()
            return Reply.json(judgement("add"))
        said = next(text for text in replies if text in user)
        return Reply.json(replies[said])

    return respond


def test_a_fact_another_job_wrote_meanwhile_is_a_duplicate(
    engine: Engine, alice: Principal, mem: Memory, llm: FakeLLM, worker: Worker
) -> None:
    say(engine, alice, mem, "I like jazz.")
    first = say(engine, alice, mem, "I live in Berlin and I like rock.")
    second = say(engine, alice, mem, "Berlin is home.")
    other = Worker(engine, config=CONFIG, owner="other")
    replies = {
        "I like jazz.": facts(semantic=["The user likes jazz"]),
        "I live in Berlin and": facts(semantic=["The user lives in Berlin", "The user likes rock"]),
        "Berlin is home.": facts(semantic=["The user lives in Berlin"]),
    }
    llm.respond_with(scripted(replies, lambda: other.run_once()))  # runs the third turn's job
    assert worker.run_until_idle() == 2
    contents = [e.content for e in extracted(engine, mem)]
    assert sorted(contents) == [
        "The user likes jazz",
        "The user likes rock",
        "The user lives in Berlin",
    ]
    job = job_of(engine, first)
    assert job.result["counts"] == {"added": 1, "deduped": 1, "superseded": 0, "suppressed": 0}
    assert "found at write time" in job.progress_msg
    (berlin,) = [e for e in extracted(engine, mem) if "Berlin" in e.content]
    assert berlin.source_id == second.message_id
    assert engine.evidence(alice, mem.id, berlin.message_id) == [
        second.message_id,
        first.message_id,
    ]


def test_a_duplicate_of_an_entry_rejected_meanwhile_is_suppressed(
    engine: Engine, alice: Principal, mem: Memory, llm: FakeLLM, worker: Worker
) -> None:
    say(engine, alice, mem, "I love durian and jazz.")
    llm.push(facts(semantic=["The user loves durian", "The user likes jazz"]))
    worker.run_once()
    durian = next(e for e in extracted(engine, mem) if "durian" in e.content)
    again = say(engine, alice, mem, "Durian! And rock.")
    replies = {"Durian!": facts(semantic=["The user loves durian", "The user likes rock"])}
    reject = lambda: engine.review(alice, mem.id, durian.message_id, "rejected")  # noqa: E731
    llm.respond_with(scripted(replies, reject))
    worker.run_once()
    job = job_of(engine, again)
    assert job.result["counts"] == {"added": 1, "deduped": 0, "superseded": 0, "suppressed": 1}
    assert f"suppress (entry {durian.message_id} rejected meanwhile)" in job.progress_msg
    assert engine.evidence(alice, mem.id, durian.message_id) == [durian.source_id]
    assert "The user loves durian" not in [
        e.content for e in extracted(engine, mem) if e.trust is not Trust.REJECTED
    ]
